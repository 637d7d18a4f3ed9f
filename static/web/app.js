/* Context Architect pages: the little behaviour the templates need (no inline scripts: the CSP forbids them). */
(function () {
  "use strict";

  /* The workspace switcher submits itself on change; the button stays for keyboards and no-JS. */
  function bindAutosubmit(root) {
    root.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      if (select.dataset.bound) return;
      select.dataset.bound = "1";
      select.addEventListener("change", function () { select.form.requestSubmit(); });
    });
  }

  function init(root) {
    bindAutosubmit(root);
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:afterSettle", function (event) { init(event.target); });
  window.caInit = init;
})();
