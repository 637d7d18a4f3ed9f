/* The profile page's behaviour (no inline scripts: the CSP forbids them): progress and Cancel for
 * "Try it" and "Compare". Cancel aborts the browser's request; the server finishes the two
 * assemblies it started (they save and change nothing) and its answer is dropped. */
(function () {
  "use strict";

  // The try button sends; its form holds the request (hx-sync), so Cancel aborts the form.
  var BUSY = { "try-button": "#try-busy", "profile-form": "#try-busy", "compare-form": "#compare-busy" };
  var STATUS = { "try-button": "#try-status", "profile-form": "#try-status", "compare-form": "#compare-status" };

  function part(map, element) {
    var key = element && element.id;
    return key && map[key] ? document.querySelector(map[key]) : null;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var busy = part(BUSY, event.target);
    var status = part(STATUS, event.target);
    if (busy) busy.hidden = false;
    if (status) status.textContent = "";
  });
  ["htmx:afterRequest", "htmx:abort", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function (event) {
      var busy = part(BUSY, event.target);
      if (busy) busy.hidden = true;
    });
  });
  document.addEventListener("htmx:abort", function (event) {
    var status = part(STATUS, event.target);
    if (status) status.textContent = "Cancelled: nothing was saved.";
  });

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target.closest("[data-abort]") : null;
    if (!target) return;
    event.preventDefault();
    var source = document.querySelector(target.getAttribute("data-abort"));
    if (source && window.htmx) window.htmx.trigger(source, "htmx:abort");
  });
})();
