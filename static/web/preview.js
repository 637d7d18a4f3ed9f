/* The preview page's behaviour (no inline scripts: the CSP forbids them).
 * - progress and cancel for the htmx request that assembles (the server sees its client leave and
 *   stops at its next stage, recording nothing). htmx fires `htmx:abort` on the form at every submit
 *   (hx-sync="this:replace" aborts whatever ran before), so only the Cancel button says "Cancelled";
 * - a what-if row's budget goes into the form (Stream and the next Assemble use it) as its link
 *   swaps the result and the address;
 * - Ctrl+Enter (or Cmd+Enter) in the form assembles;
 * - copy the assembled context to the clipboard;
 * - streaming mode: the same request to /preview/stream/ read as Server-Sent Events, chunk by chunk;
 *   Cancel aborts the fetch, and the server stops assembling at its next stage (nothing is recorded).
 */
(function () {
  "use strict";

  var timer = null;
  var streamAbort = null;

  function $(selector) { return document.querySelector(selector); }

  function say(text) {
    var status = $("#preview-status");
    if (status) status.textContent = text;
  }

  function startProgress(label) {
    var busy = $("#preview-busy");
    var elapsed = $("#preview-elapsed");
    if (!busy) return;
    var started = performance.now();
    busy.hidden = false;
    if (busy.querySelector(".busy-label")) busy.querySelector(".busy-label").textContent = label;
    clearInterval(timer);
    timer = setInterval(function () {
      if (elapsed) elapsed.textContent = ((performance.now() - started) / 1000).toFixed(1) + " s";
    }, 100);
  }

  function stopProgress() {
    clearInterval(timer);
    var busy = $("#preview-busy");
    if (busy) busy.hidden = true;
  }

  function previewForm() { return $("#preview-form"); }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.target === previewForm()) {
      say("");
      startProgress("Assembling…");
    }
  });
  ["htmx:afterRequest", "htmx:abort", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function (event) {
      if (event.target === previewForm()) stopProgress();
    });
  });

  document.addEventListener("keydown", function (event) {
    var form = previewForm();
    var target = event.target instanceof Element ? event.target : null;
    if (!form || !target || !form.contains(target)) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (!target) return;

    if (target.closest("#preview-cancel")) {
      event.preventDefault();
      var busy = $("#preview-busy");
      if (window.htmx && previewForm() && busy && !busy.hidden && !streamAbort) {
        window.htmx.trigger(previewForm(), "htmx:abort");
        say("Cancelled: the server stops assembling at its next stage and records nothing.");
      }
      if (streamAbort) {
        streamAbort.abort();
        streamAbort = null;
        $("#stream-summary").textContent = "Cancelled: the server stopped assembling; nothing was recorded or cached.";
        say("Stream cancelled.");
      }
      stopProgress();
      return;
    }

    var whatIf = target.closest("#what-if a[data-budget]");
    if (whatIf) {
      var budget = $("#preview-form [name=token_budget]");
      if (budget) budget.value = whatIf.getAttribute("data-budget");
      return;  // htmx follows the link: the result and the address switch to that budget
    }

    var copy = target.closest("[data-copy]");
    if (copy) {
      event.preventDefault();
      var source = document.querySelector(copy.getAttribute("data-copy"));
      if (!source) return;
      var text = source.textContent;
      var done = function () { copy.textContent = "Copied"; say("The context was copied to the clipboard."); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { say("The browser refused the clipboard."); });
      } else {
        var range = document.createRange();
        range.selectNodeContents(source);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        say("Clipboard unavailable: the context is selected, press Ctrl+C.");
      }
      return;
    }

    if (target.closest("#preview-stream")) {
      event.preventDefault();
      stream();
    }
  });

  function stream() {
    var form = previewForm();
    if (!form) return;
    var params = new URLSearchParams(new FormData(form));
    params.delete("csrfmiddlewaretoken");
    var list = $("#stream-chunks");
    var summary = $("#stream-summary");
    var section = $("#stream-result");
    if (!list || !section) return;
    section.hidden = false;
    list.textContent = "";
    summary.textContent = "Waiting for the first chunk…";
    if (streamAbort) streamAbort.abort();
    streamAbort = new AbortController();
    startProgress("Streaming…");
    var count = 0;
    fetch(form.getAttribute("data-stream-url") + "?" + params.toString(), {
      headers: { "Accept": "text/event-stream" },
      credentials: "same-origin",
      signal: streamAbort.signal,
    }).then(function (response) {
      if (response.redirected || response.status === 401 || response.status === 403) {
        window.location.assign(response.url);
        return null;
      }
      if (!response.ok) {
        return response.json().then(function (body) {
          summary.textContent = "The context could not be assembled: " + body.error.message + " (" + body.error.code + ")";
        });
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function pump() {
        return reader.read().then(function (step) {
          if (step.done) return;
          buffer += decoder.decode(step.value, { stream: true });
          var parts = buffer.split("\n\n");
          buffer = parts.pop();
          parts.forEach(function (raw) {
            var type = "message", data = "";
            raw.split("\n").forEach(function (line) {
              if (line.indexOf("event: ") === 0) type = line.slice(7);
              else if (line.indexOf("data: ") === 0) data += line.slice(6);
            });
            if (!data) return;
            var payload = JSON.parse(data);
            if (type === "chunk") {
              count += 1;
              var item = document.createElement("li");
              var head = document.createElement("span");
              head.className = "badge";
              head.textContent = payload.kind + (payload.pinned ? " · pinned" : "") + " · " + payload.tokens + " tokens";
              item.appendChild(head);
              item.appendChild(document.createTextNode(" " + payload.text));
              list.appendChild(item);
              summary.textContent = count + " chunk" + (count === 1 ? "" : "s") + " so far…";
            } else if (type === "progress") {
              summary.textContent = "Assembling… (Cancel stops the server too)";
            } else if (type === "error") {
              summary.textContent = "The context could not be assembled: " + payload.error.message +
                " (" + payload.error.code + ")";
            } else if (type === "complete") {
              summary.textContent = payload.total_chunks + " chunks, " + payload.total_tokens + " of " +
                payload.token_budget + " tokens, zone " + payload.zone + ", " + payload.elapsed_ms + " ms" +
                (payload.partial ? " (partial: the deadline passed)" : "") + ".";
              say("Streaming finished.");
            }
          });
          return pump();
        });
      }
      return pump();
    }).catch(function (error) {
      if (error && error.name === "AbortError") return;
      summary.textContent = "The stream failed: " + error;
    }).finally(function () {
      stopProgress();
      streamAbort = null;
    });
  }
})();
