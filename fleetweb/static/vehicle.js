// A vehicle's day on a Leaflet map: each trip's path as a line (numbered
// as the trips table numbers them), the stops as rings, and the vehicle's
// latest position, all from the page's data; the tables say the same
// without the map, and the page says when the tiles do not load.
(function () {
  "use strict";
  var el = document.getElementById("day-map");
  if (!el) return; // a day beyond the plan's history: no map
  var data = JSON.parse(document.getElementById("day-data").textContent || "{}");
  var note = document.getElementById("map-note");
  window.fleetDay = { trips: 0, stops: 0 };
  if (!el.getAttribute("data-tiles")) return;
  if (!window.L) { note.hidden = false; return; }
  // text makes an element showing s as text: Leaflet takes a string as
  // HTML, and vehicle names come from API clients.
  function text(s) {
    var span = document.createElement("span");
    span.textContent = s;
    return span;
  }
  var map = L.map(el, { keyboard: true }).setView([52.52, 13.405], 11);
  var tiles = L.tileLayer(el.getAttribute("data-tiles"), { maxZoom: 19, attribution: el.getAttribute("data-attribution") }).addTo(map);
  tiles.once("tileerror", function () { note.hidden = false; });
  var bounds = [];
  (data.trips || []).forEach(function (path, i) {
    var line = L.polyline(path, { className: "trip-line", weight: 5 }).addTo(map);
    line.bindTooltip(text("Trip " + (i + 1)), { sticky: true });
    bounds = bounds.concat(path);
    window.fleetDay.trips++;
  });
  (data.stops || []).forEach(function (s) {
    L.circleMarker([s.lat, s.lon], { className: "stop-ring", radius: 8 }).addTo(map).bindTooltip(text(s.label));
    bounds.push([s.lat, s.lon]);
    window.fleetDay.stops++;
  });
  if (data.position) {
    var p = data.position;
    var now = L.marker([p.lat, p.lon], { icon: L.divIcon({ className: "veh-marker now-marker", iconSize: [18, 18] }), keyboard: true })
      .addTo(map).bindTooltip(text(p.label), { direction: "top", offset: [0, -10] });
    // Its popup: the latest report's attributes, a line each.
    if (p.attributes && p.attributes.length) {
      now.bindPopup(window.fleetAttrPopup(p.label, p.attributes), window.fleetPopupOptions);
      window.fleetDay.attributes = p.attributes.length;
      window.fleetDay.position = now;
    }
    if (!bounds.length) bounds.push([p.lat, p.lon]);
  }
  if (bounds.length) map.fitBounds(bounds, { padding: [30, 30], maxZoom: 15 });
  window.fleetDay.map = map;
})();
