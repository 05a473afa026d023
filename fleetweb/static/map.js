// The live map: the vehicles from the page's data on a Leaflet map and in
// the list, moved by the "location" events of /map/events (Server-Sent
// Events on the session cookie). A marker takes its vehicle's status
// colour (the legend's); its name shows on hover, tap or focus, so that
// names do not pile up where vehicles cluster, and a click opens its
// latest report's attributes. The list works without
// tiles or Leaflet, and the page says when the tiles do not load.
(function () {
  "use strict";
  var vehicles = JSON.parse(document.getElementById("vehicles-data").textContent || "[]");
  var el = document.getElementById("map");
  var note = document.getElementById("map-note");
  var map = null;
  var markers = {};
  window.fleetMap = { markers: markers };
  if (window.L && el.getAttribute("data-tiles")) {
    try {
      map = L.map(el, { keyboard: true }).setView([52.52, 13.405], 11);
      var tiles = L.tileLayer(el.getAttribute("data-tiles"), { maxZoom: 19, attribution: el.getAttribute("data-attribution") }).addTo(map);
      tiles.once("tileerror", function () { note.hidden = false; });
      window.fleetMap.map = map;
    } catch (e) { map = null; }
  } else if (el.getAttribute("data-tiles")) {
    note.hidden = false; // Leaflet did not load
  }
  function fmt(n) { return Number(n).toFixed(5); }
  // text makes an element showing s as text: Leaflet takes a string as
  // HTML, and vehicle names come from API clients.
  function text(s) {
    var span = document.createElement("span");
    span.textContent = s;
    return span;
  }
  function icon(status) {
    return L.divIcon({ className: "veh-marker mk-" + status, iconSize: [18, 18] });
  }
  function label(v) { return (v.name || v.vehicle_id) + " · " + v.status; }
  function cell(row, cls, name) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    td.setAttribute("data-label", name);
    row.appendChild(td);
    return td;
  }
  // A report older than the page's data-stale-after (seconds) is marked
  // stale: the status shown is what it said. Its age comes from the
  // server (age_seconds) for the page's first list, and is 0 for a live
  // report; the mark then comes by the browser's timer, whatever its clock.
  var staleAfter = parseInt(document.getElementById("vehicles").getAttribute("data-stale-after"), 10) || 300;
  function staleLater(row, v) {
    clearTimeout(row.staleTimer);
    if (v.status === "offline") return;
    var mark = function () {
      var s = document.createElement("span");
      s.className = "badge st-stale";
      s.textContent = "stale";
      s.title = "No report for over " + Math.round(staleAfter / 60) + " minutes: the status is what the last report said.";
      row.querySelector(".ts").append(" ", s);
    };
    var left = staleAfter - (v.age_seconds || 0);
    if (left <= 0) mark(); else row.staleTimer = setTimeout(mark, left * 1000);
  }
  function place(v) {
    var row = document.getElementById("veh-" + v.vehicle_id);
    if (!row) {
      row = document.createElement("tr");
      row.id = "veh-" + v.vehicle_id;
      cell(row, "title", "Vehicle").textContent = v.name || v.vehicle_id;
      var badge = document.createElement("span");
      badge.className = "badge";
      cell(row, "status", "Status").appendChild(badge);
      cell(row, "pos", "Position");
      cell(row, "ts", "Last report (UTC)");
      document.querySelector("#vehicles tbody").appendChild(row);
    }
    var b = row.querySelector(".status .badge");
    b.textContent = v.status;
    b.className = "badge st-" + v.status;
    if (v.latitude == null || v.longitude == null) return;
    row.setAttribute("data-lat", v.latitude);
    row.setAttribute("data-lon", v.longitude);
    row.querySelector(".pos").textContent = fmt(v.latitude) + ", " + fmt(v.longitude);
    if (v.timestamp) {
      var ts = row.querySelector(".ts");
      ts.textContent = v.timestamp.substring(11, 19);
      ts.title = v.timestamp;
      staleLater(row, v);
    }
    if (!map) return;
    var ll = [v.latitude, v.longitude];
    var m = markers[v.vehicle_id];
    if (!m) {
      m = L.marker(ll, { icon: icon(v.status), keyboard: true }).addTo(map);
      m.bindTooltip(text(label(v)), { direction: "top", offset: [0, -10] });
      markers[v.vehicle_id] = m;
    } else {
      m.setLatLng(ll);
      if (m.status !== v.status) m.setIcon(icon(v.status));
      m.setTooltipContent(text(label(v)));
    }
    // Its popup (a click, Enter): the latest report's attributes, a line
    // each; none when that report had none.
    if (v.attributes && v.attributes.length) {
      var box = window.fleetAttrPopup(v.name || v.vehicle_id, v.attributes);
      if (m.getPopup()) m.setPopupContent(box); else m.bindPopup(box, window.fleetPopupOptions);
    } else if (m.getPopup()) {
      m.unbindPopup();
    }
    m.status = v.status;
    m.getElement().setAttribute("aria-label", label(v));
  }
  vehicles.forEach(place);
  if (map) {
    var pts = vehicles.filter(function (v) { return v.latitude != null; }).map(function (v) { return [v.latitude, v.longitude]; });
    if (pts.length) map.fitBounds(pts, { padding: [30, 30], maxZoom: 14 });
  }

  var status = document.getElementById("stream-status");
  var retry = document.getElementById("stream-retry");
  if (!window.EventSource) { status.textContent = "live updates need a newer browser"; return; }
  var es = null;
  function connect() {
    retry.hidden = true;
    status.textContent = "connecting…";
    es = new EventSource("/map/events");
    es.onopen = function () { status.textContent = "live"; };
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) {
        status.textContent = "Live updates stopped.";
        retry.hidden = false;
      } else {
        status.textContent = "reconnecting…";
      }
    };
    es.addEventListener("location", function (e) { place(JSON.parse(e.data)); });
    // The server refused the stream and says why (over the plan's live
    // maps, signed out): trying again at once would not help.
    es.addEventListener("refused", function (e) {
      es.close();
      var msg = "Live updates are refused.";
      try { msg = JSON.parse(e.data).message || msg; } catch (err) { /* keep the general words */ }
      status.textContent = msg;
      retry.hidden = false;
    });
    es.addEventListener("signed-out", function () { es.close(); status.textContent = "You are signed out: sign in again for live updates."; });
  }
  retry.addEventListener("click", connect);
  connect();
})();
