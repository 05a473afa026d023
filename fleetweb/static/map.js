// The live map: the vehicles from the page's data on a Leaflet map and in
// the list, moved by the "location" events of /map/events (Server-Sent
// Events on the session cookie). The list works without tiles or Leaflet.
(function () {
  "use strict";
  var vehicles = JSON.parse(document.getElementById("vehicles-data").textContent || "[]");
  var el = document.getElementById("map");
  var map = null;
  var markers = {};
  window.fleetMap = { markers: markers };
  if (window.L && el.getAttribute("data-tiles")) {
    try {
      L.Icon.Default.imagePath = "/static/leaflet/images/";
      map = L.map(el, { keyboard: true }).setView([52.52, 13.405], 11);
      L.tileLayer(el.getAttribute("data-tiles"), { maxZoom: 19, attribution: el.getAttribute("data-attribution") }).addTo(map);
      window.fleetMap.map = map;
    } catch (e) { map = null; }
  }
  function fmt(n) { return Number(n).toFixed(5); }
  // text makes an element showing s as text: Leaflet takes a string as
  // HTML, and vehicle names come from API clients.
  function text(s) {
    var span = document.createElement("span");
    span.textContent = s;
    return span;
  }
  function place(v) {
    var row = document.getElementById("veh-" + v.vehicle_id);
    if (!row) {
      row = document.createElement("tr");
      row.id = "veh-" + v.vehicle_id;
      row.innerHTML = "<td></td><td class=status><span class=badge></span></td><td class=pos></td><td class=ts></td>";
      row.cells[0].textContent = v.name || v.vehicle_id;
      document.querySelector("#vehicles tbody").appendChild(row);
    }
    var badge = row.querySelector(".status .badge");
    badge.textContent = v.status;
    badge.className = "badge st-" + v.status;
    if (v.latitude == null || v.longitude == null) return;
    row.setAttribute("data-lat", v.latitude);
    row.setAttribute("data-lon", v.longitude);
    row.querySelector(".pos").textContent = fmt(v.latitude) + ", " + fmt(v.longitude);
    if (v.timestamp) {
      var ts = row.querySelector(".ts");
      ts.textContent = v.timestamp.substring(11, 19);
      ts.title = v.timestamp;
    }
    if (!map) return;
    var ll = [v.latitude, v.longitude];
    var m = markers[v.vehicle_id];
    if (m) {
      m.setLatLng(ll);
    } else {
      m = L.marker(ll, { title: v.name || v.vehicle_id, alt: v.name || v.vehicle_id }).addTo(map);
      m.bindTooltip(text(v.name || v.vehicle_id), { permanent: true, direction: "right", offset: [10, -20] });
      markers[v.vehicle_id] = m;
    }
    m.bindPopup(text((v.name || v.vehicle_id) + ": " + v.status));
  }
  vehicles.forEach(place);
  if (map) {
    var pts = vehicles.filter(function (v) { return v.latitude != null; }).map(function (v) { return [v.latitude, v.longitude]; });
    if (pts.length) map.fitBounds(pts, { padding: [30, 30], maxZoom: 14 });
  }
  var status = document.getElementById("stream-status");
  if (!window.EventSource) { status.textContent = "live updates need a newer browser"; return; }
  var es = new EventSource("/map/events");
  es.onopen = function () { status.textContent = "live"; };
  es.onerror = function () { status.textContent = "reconnecting…"; };
  es.addEventListener("location", function (e) { place(JSON.parse(e.data)); });
  es.addEventListener("signed-out", function () { es.close(); status.textContent = "signed out"; });
})();
