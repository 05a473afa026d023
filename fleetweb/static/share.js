// A share link's public page: the vehicle's route and position on a
// Leaflet map from the page's data, moved by the "position" events of the
// link's stream (Server-Sent Events, no session); the page says when the
// link ends. The page speaks in the time zone the server was told (the
// fleet_tz cookie that app.js keeps): on a first visit that is UTC, so the
// page loads once more in the browser's own zone. Without Leaflet or tiles
// the position still updates in words.
(function () {
  "use strict";
  var main = document.getElementById("main");
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && zone !== main.getAttribute("data-zone") && document.cookie.indexOf("fleet_tz=" + zone) >= 0 &&
        !sessionStorage.getItem("fleet_tz_reloaded")) {
      sessionStorage.setItem("fleet_tz_reloaded", "1");
      location.reload();
      return;
    }
  } catch (e) { /* no Intl or no storage: the page speaks as it is */ }
  var data = JSON.parse(document.getElementById("share-data").textContent || "{}");
  var route = data.route || [];
  var el = document.getElementById("share-map");
  var note = document.getElementById("map-note");
  var status = document.getElementById("stream-status");
  var last = document.getElementById("share-last");
  var where = document.getElementById("share-position");
  var share = window.fleetShare = { points: route.length, position: data.position || null, ended: false };
  var map = null, line = null, marker = null;
  if (window.L && el.getAttribute("data-tiles")) {
    try {
      map = L.map(el, { keyboard: true }).setView([52.52, 13.405], 12);
      // The page's address is the secret: the tile server gets no Referer.
      var tiles = L.tileLayer(el.getAttribute("data-tiles"), { maxZoom: 19, attribution: el.getAttribute("data-attribution"),
        referrerPolicy: "no-referrer" }).addTo(map);
      tiles.once("tileerror", function () { note.hidden = false; });
      line = L.polyline(route, { className: "trip-line", weight: 5 }).addTo(map);
      share.map = map;
    } catch (e) { map = null; }
  } else if (el.getAttribute("data-tiles")) {
    note.hidden = false; // Leaflet did not load
  }
  function fmt(n) { return Number(n).toFixed(5); }
  function when(iso) {
    try {
      return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short", timeZone: main.getAttribute("data-zone") });
    } catch (e) { return iso; }
  }
  function place(p) {
    share.position = p;
    if (!map) return;
    if (!marker) {
      marker = L.marker([p.lat, p.lon], { icon: L.divIcon({ className: "veh-marker now-marker", iconSize: [18, 18] }), keyboard: true,
        title: "Its position" }).addTo(map);
    } else {
      marker.setLatLng([p.lat, p.lon]);
    }
  }
  if (data.position) place(data.position);
  if (map) {
    var bounds = route.slice();
    if (data.position) bounds.push([data.position.lat, data.position.lon]);
    if (bounds.length) map.fitBounds(bounds, { padding: [30, 30], maxZoom: 15 });
  }

  if (!window.EventSource) { status.textContent = "live updates need a newer browser"; return; }
  var es = new EventSource(document.getElementById("share-script").getAttribute("data-events"));
  es.onopen = function () { if (!share.ended) status.textContent = "live"; };
  es.onerror = function () {
    if (share.ended) return;
    status.textContent = es.readyState === EventSource.CLOSED ?
      "Live updates stopped: the link may have expired or been revoked. Reload the page to see." : "reconnecting…";
  };
  es.addEventListener("position", function (e) {
    var r = JSON.parse(e.data);
    var p = { lat: r.latitude, lon: r.longitude, time: r.timestamp };
    route.push([p.lat, p.lon]);
    share.points = route.length;
    if (line) line.addLatLng([p.lat, p.lon]);
    place(p);
    where.textContent = fmt(p.lat) + ", " + fmt(p.lon);
    last.textContent = when(p.time);
    if (map && !map.getBounds().contains([p.lat, p.lon])) map.panTo([p.lat, p.lon]);
  });
  // The link ended (expired, revoked): no more updates, and the page says so.
  es.addEventListener("ended", function () {
    es.close();
    share.ended = true;
    status.textContent = "This link has ended: it expired or was revoked.";
    status.className = "warning";
  });
  es.addEventListener("refused", function (e) {
    es.close();
    var msg = "Live updates are refused.";
    try { msg = JSON.parse(e.data).message || msg; } catch (err) { /* keep the general words */ }
    status.textContent = msg;
  });
})();
