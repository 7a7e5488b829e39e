// The import page's copy button: shown only with script; copies the export prompt through
// the clipboard API (the textarea stays selectable without it). No inline script (CSP).
(function () {
  "use strict";

  function copyFrom(button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var label = button.textContent;
    function say(text) {
      button.textContent = text;
      setTimeout(function () { button.textContent = label; }, 2000);
    }
    function fallback() {
      source.focus();
      source.select();
      say(button.getAttribute("data-copy-failed") || label);
    }
    if (!navigator.clipboard || !navigator.clipboard.writeText) {
      fallback();
      return;
    }
    navigator.clipboard.writeText(source.value).then(function () {
      say(button.getAttribute("data-copied") || label);
    }, fallback);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () { copyFrom(button); });
    });
  });
})();
