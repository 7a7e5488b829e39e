// StrataGate web app behaviour that htmx does not cover; no inline script anywhere (CSP).
(function () {
  "use strict";

  // Polling: [data-poll-url] is refreshed with If-None-Match; the fragment's
  // data-poll-interval (ms) sets the next wait; hidden tabs do not poll.
  function startPolling(element) {
    var etag = null;
    var timer = null;
    function interval() {
      var marked = element.querySelector("[data-poll-interval]");
      var value = marked ? parseInt(marked.getAttribute("data-poll-interval"), 10) : 30000;
      return isNaN(value) ? 30000 : value;
    }
    function schedule() {
      clearTimeout(timer);
      if (!document.hidden) timer = setTimeout(poll, interval());
    }
    function poll() {
      var headers = { "HX-Request": "true" };
      if (etag) headers["If-None-Match"] = etag;
      fetch(element.getAttribute("data-poll-url"), { headers: headers, credentials: "same-origin" })
        .then(function (response) {
          if (response.status === 200) {
            etag = response.headers.get("ETag");
            return response.text().then(function (html) {
              element.innerHTML = html;
              if (window.htmx) window.htmx.process(element);
            });
          }
        })
        .catch(function () {})
        .then(schedule);
    }
    document.addEventListener("visibilitychange", function () {
      if (document.hidden) clearTimeout(timer); else poll();
    });
    element.setAttribute("data-polling", "on");
    schedule();
  }

  function toggleStatusRows(button) {
    var hidden = localStorage.getItem("sg-hide-status") === "1";
    function apply() {
      document.body.classList.toggle("hide-status", hidden);
      button.textContent = button.getAttribute(hidden ? "data-show-label" : "data-hide-label") || button.textContent;
    }
    button.setAttribute("data-hide-label", button.textContent);
    button.setAttribute("data-show-label", button.getAttribute("data-show") || button.textContent);
    button.addEventListener("click", function () {
      hidden = !hidden;
      localStorage.setItem("sg-hide-status", hidden ? "1" : "0");
      apply();
    });
    apply();
  }

  function init(root) {
    root.querySelectorAll("[data-poll-url]:not([data-polling])").forEach(startPolling);
  }

  document.addEventListener("DOMContentLoaded", function () {
    init(document);
    document.querySelectorAll("[data-toggle-status]").forEach(toggleStatusRows);
    var turns = document.getElementById("turns");
    if (turns) turns.scrollIntoView({ block: "end" });
  });
  document.addEventListener("htmx:afterSwap", function (event) { init(event.target); });
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.target.closest && event.target.closest("[data-chat-form]");
    if (form && event.detail.successful) {
      form.reset();
      var intro = document.querySelector(".turns .intro");
      if (intro) intro.remove();
      var textarea = form.querySelector("textarea");
      if (textarea) textarea.focus();
    }
  });
  // Keep error answers of htmx requests visible instead of silently dropping them.
  document.addEventListener("htmx:responseError", function (event) {
    var target = event.detail.target;
    var note = document.createElement("p");
    note.className = "warning";
    note.textContent = (event.detail.xhr.responseText || "request failed").replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim().slice(0, 300);
    if (target) target.appendChild(note);
  });
})();
