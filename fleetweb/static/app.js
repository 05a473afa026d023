// The dashboard's small helpers: copy buttons. The pages work without it.
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var input = document.getElementById(btn.getAttribute("data-copy"));
      var status = document.getElementById("copy-status");
      input.focus();
      input.select();
      var done = function (ok) {
        if (status) status.textContent = ok ? "Copied to the clipboard." : "Select the text and copy it with Ctrl+C.";
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () { done(true); }, function () { done(document.execCommand && document.execCommand("copy")); });
      } else {
        done(document.execCommand && document.execCommand("copy"));
      }
    });
  });
})();
