// The chat box: Enter sends, Shift+Enter (or an IME still composing) inserts a newline.
// A file of its own because the Content-Security-Policy forbids inline scripts.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    if (!box.matches || !box.matches("[data-chat-form] textarea")) return;
    event.preventDefault();
    if (!box.value.trim()) return;
    var form = box.form;
    if (form.requestSubmit) form.requestSubmit(); else form.querySelector("button[type=submit]").click();
  });
})();
