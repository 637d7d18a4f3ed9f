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

  /* A form with data-confirm asks first (delete buttons); declining stops htmx's submit as well. */
  document.addEventListener("submit", function (event) {
    var message = event.target.dataset && event.target.dataset.confirm;
    if (message && !window.confirm(message)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);

  function init(root) {
    bindAutosubmit(root);
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:afterSettle", function (event) { init(event.target); });
  window.caInit = init;
})();
