// The dashboard's small helpers: the header's menu on narrow screens and
// the copy buttons. The pages work without them (the menu then stays
// unfolded). The page loads this right after its header, so that the menu
// is folded before the rest is drawn.
(function () {
  "use strict";
  var header = document.querySelector("header.top");
  var toggle = header && header.querySelector(".menu-button");
  if (toggle) {
    var set = function (open) {
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      header.classList.toggle("open", open);
    };
    toggle.hidden = false;
    header.classList.add("folding");
    toggle.addEventListener("click", function () { set(toggle.getAttribute("aria-expanded") !== "true"); });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && header.classList.contains("open")) { set(false); toggle.focus(); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
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
  });
})();
