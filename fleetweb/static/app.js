// The dashboard's small helpers: the header's menu on narrow screens, the
// copy buttons, "select every alert of the page", and the browser's time
// zone, which the vehicle pages speak in (kept in the fleet_tz cookie; the
// server reads it, UTC without it). The pages work without them (the menu
// then stays unfolded, times are UTC). The page loads this right after its
// header, so that the menu is folded before the rest is drawn.
(function () {
  "use strict";
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && document.cookie.indexOf("fleet_tz=" + zone) < 0) {
      document.cookie = "fleet_tz=" + zone + "; Path=/; Max-Age=31536000; SameSite=Lax" + (location.protocol === "https:" ? "; Secure" : "");
    }
  } catch (e) { /* no Intl: the pages speak UTC */ }
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
    // Select every checkbox of a form's name at once, and count the ticks.
    document.querySelectorAll("input[data-select-all]").forEach(function (all) {
      var name = all.getAttribute("data-select-all");
      var boxes = Array.prototype.slice.call(document.querySelectorAll('input[type=checkbox][name="' + name + '"]'));
      var status = document.getElementById("selected-count");
      var count = function () {
        var n = boxes.filter(function (b) { return b.checked; }).length;
        all.checked = n > 0 && n === boxes.length;
        all.indeterminate = n > 0 && n < boxes.length;
        if (status) status.textContent = n === 0 ? "" : n === 1 ? "1 selected" : n + " selected";
      };
      all.closest("label").hidden = false;
      all.addEventListener("change", function () {
        boxes.forEach(function (b) { b.checked = all.checked; });
        count();
      });
      boxes.forEach(function (b) { b.addEventListener("change", count); });
      count();
    });
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
