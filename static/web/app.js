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

  /* A secret's field selects itself when focused, so a keyboard or a phone copies it whole. */
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("input[data-select-all]")) event.target.select();
  });

  /* Copy buttons (the "shown once" panel): data-copy-from names the field, data-copy-status where to say so. */
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy-from]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy-from"));
    var status = document.querySelector(button.getAttribute("data-copy-status"));
    if (!source) return;
    var say = function (text) { if (status) status.textContent = text; };
    var selectIt = function () {
      source.focus();
      source.select();
      say("Selected: press Ctrl+C (or Cmd+C) to copy.");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.value).then(function () {
        button.firstChild.textContent = "Copied";
        say("Copied to the clipboard.");
      }, selectIt);
    } else {
      selectIt();
    }
  });

  /* <details data-collapse-below="720">: open on a wide screen, folded on a narrow one unless a filter
     inside is set (data-set), so a phone sees the list, not two screens of filters. */
  function collapseNarrow(root) {
    root.querySelectorAll("details[data-collapse-below]").forEach(function (details) {
      if (details.dataset.collapsed) return;
      details.dataset.collapsed = "1";
      var width = parseInt(details.dataset.collapseBelow, 10);
      if (window.matchMedia("(max-width: " + width + "px)").matches && !details.dataset.set) details.open = false;
    });
  }

  /* Tables marked .cards turn into one card per row below 720 px; each cell is labelled by its
     column's header (data-label) unless the template already says. */
  function labelCards(root) {
    root.querySelectorAll("table.cards").forEach(function (table) {
      var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
        return th.textContent.trim();
      });
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.prototype.forEach.call(row.children, function (cell, i) {
          if (!cell.hasAttribute("data-label") && heads[i] && !cell.hasAttribute("colspan")) {
            cell.setAttribute("data-label", heads[i]);
          }
        });
      });
    });
  }

  /* After a swap that replaced the focused control (a pager link, a range tab), the focus would fall to
     <body> and a keyboard user would start again from the top. Put it back: on the control of the same
     kind and words in the new content, else on the region's heading, else on the region. */
  var swapping = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var elt = event.detail.requestConfig && event.detail.requestConfig.elt;
    swapping = { id: event.detail.target && event.detail.target.id, tag: elt && elt.tagName, text: elt && elt.textContent.trim() };
  });
  document.addEventListener("htmx:afterSettle", function () {
    var was = swapping;
    swapping = null;
    if (!was || !was.id) return;
    var active = document.activeElement;
    if (active && active !== document.body && document.contains(active)) return;
    var region = document.getElementById(was.id);
    if (!region) return;
    var same = was.tag ? Array.prototype.find.call(region.getElementsByTagName(was.tag), function (el) {
      return el.textContent.trim() === was.text;
    }) : null;
    var target = same || region.querySelector("h1, h2, h3") || region;
    if (!same && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: !!same });
  });

  function init(root) {
    bindAutosubmit(root);
    collapseNarrow(root);
    labelCards(root);
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:afterSettle", function (event) { init(event.target); });
  window.caInit = init;
})();
