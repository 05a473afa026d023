// The dashboard's small helpers: the header's menu on narrow screens, the
// maps' popup of a report's attributes, the copy buttons, "select every alert of the page", the search beside a
// vehicle picker of a large fleet, and the browser's time
// zone, which the vehicle pages speak in (kept in the fleet_tz cookie; the
// server reads it, UTC without it). The pages work without them (the menu
// then stays unfolded, times are UTC). The page loads this right after its
// header, so that the menu is folded before the rest is drawn.
(function () {
  "use strict";
  // fleetAttrPopup makes the box a map's popup shows of a report's
  // attributes: its title, then a line each (the server's words), all as
  // text (names and values come from API clients and trackers).
  // fleetPopupOptions keep an attributes popup clear of the zoom
  // control in a map's top left corner: the map pans so that the whole
  // popup shows below it, on a phone too (a popup at most 280 px wide fits
  // a phone's map).
  window.fleetPopupOptions = { maxWidth: 280, autoPanPaddingTopLeft: [12, 84], autoPanPaddingBottomRight: [12, 12] };
  window.fleetAttrPopup = function (title, lines) {
    var box = document.createElement("div");
    box.className = "attr-popup";
    var head = document.createElement("strong");
    head.textContent = title;
    box.appendChild(head);
    var list = document.createElement("ul");
    lines.forEach(function (line) {
      var li = document.createElement("li");
      li.textContent = line;
      list.appendChild(li);
    });
    box.appendChild(list);
    return box;
  };
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
    // A vehicle picker that lists only the account's first vehicles gets
    // a search: the typed name or plate asks the server
    // (/vehicles/choices), and the vehicles found come first in the
    // picker, the one found chosen when it is the only one.
    document.querySelectorAll("select[data-vehicle-search]").forEach(function (select) {
      var id = select.id + "-search";
      var field = document.createElement("div");
      field.className = "vehicle-search";
      var label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = "Find a vehicle by name or plate";
      var input = document.createElement("input");
      input.type = "search";
      input.id = id;
      input.autocomplete = "off";
      input.setAttribute("aria-describedby", id + "-status");
      var status = document.createElement("p");
      status.id = id + "-status";
      status.className = "hint";
      status.setAttribute("role", "status");
      field.appendChild(label);
      field.appendChild(input);
      field.appendChild(status);
      select.parentNode.insertBefore(field, select.nextSibling);
      var asked = 0, timer = 0;
      var top = select.options.length > 0 && select.options[0].value === "" ? 1 : 0; // after "Choose a vehicle"
      var search = function () {
        var q = input.value.trim(), n = ++asked;
        if (!q) { status.textContent = ""; return; }
        fetch("/vehicles/choices?q=" + encodeURIComponent(q), { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then(function (r) {
            return r.json().then(function (body) {
              if (!r.ok) throw new Error(body.error || "The search failed.");
              return body;
            });
          })
          .then(function (body) {
            if (n !== asked) return; // a later search is on its way
            body.vehicles.forEach(function (v, i) {
              var opt = null;
              for (var j = 0; j < select.options.length; j++) {
                if (select.options[j].value === v.id) { opt = select.options[j]; break; }
              }
              if (!opt) opt = new Option(v.name, v.id);
              opt.text = v.name + (v.license_plate ? " (" + v.license_plate + ")" : "");
              select.insertBefore(opt, select.options[top + i] || null);
            });
            var found = body.vehicles.length;
            if (found === 1 && !select.multiple) select.value = body.vehicles[0].id;
            status.textContent = found === 0 ? "No vehicle's name or plate contains “" + q + "”." :
              found === 1 ? (select.multiple ? "1 vehicle found, first in the list." : "1 vehicle found and chosen: " + body.vehicles[0].name + ".") :
              (body.more ? "The first " + found + " found are first in the list; type more to narrow." : found + " vehicles found, first in the list.");
          })
          .catch(function (e) { if (n === asked) status.textContent = e.message; });
      };
      input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 250); });
      input.addEventListener("keydown", function (e) {
        if (e.key === "Enter") { e.preventDefault(); clearTimeout(timer); search(); } // search, not send the form
      });
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
