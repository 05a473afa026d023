// The alert rule form shows the fields of the chosen type only (each
// field says which types take it, from fleet's table); without the script
// every field shows and the server reads those of the chosen type.
(function () {
  "use strict";
  var form = document.getElementById("rule-form");
  if (!form) return;
  var type = form.querySelector("[name=type]");
  function show() {
    form.querySelectorAll(".type-field").forEach(function (f) {
      f.hidden = (" " + f.getAttribute("data-types") + " ").indexOf(" " + type.value + " ") < 0;
    });
  }
  show();
  type.addEventListener("change", show);
})();
