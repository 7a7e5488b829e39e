// The resident profile page: a refused save (409 stale revision, 400 invalid value)
// answers with the field's row showing why and the stored value; htmx drops 4xx answers
// by default, so for a profile field's form the row is swapped in anyway.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (event) {
    var status = event.detail.xhr.status;
    var element = event.detail.elt;
    if ((status === 409 || status === 400) && element && element.closest &&
        element.closest("[data-profile-field]")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
