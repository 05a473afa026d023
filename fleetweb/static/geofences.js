// The geofences on a Leaflet map, and a small drawing tool for the
// geofence form: "Draw on the map", then a click at the centre and one at
// the edge of a circle, or a click at each corner of a polygon. The tool
// only fills the form's fields (centre, radius, corners), which can as
// well be typed: what is typed is drawn as it is typed. Without the
// script the form works alike, typed.
(function () {
  "use strict";
  var el = document.getElementById("fence-map");
  if (!el) return;
  var shapes = JSON.parse(document.getElementById("fence-data").textContent || "[]") || [];
  var form = document.getElementById("fence-form");
  var editing = el.getAttribute("data-editing");
  window.fleetFences = { shapes: shapes.length, drawn: 0 };

  // The form's fields of one shape show only when it is chosen.
  function shape() {
    var c = form && form.querySelector("input[name=shape]:checked");
    return c ? c.value : "circle";
  }
  function showShape() {
    if (!form) return;
    var s = shape();
    form.querySelectorAll(".shape-fields").forEach(function (f) { f.hidden = f.getAttribute("data-shape") !== s; });
  }
  showShape();

  var note = document.getElementById("map-note");
  if (!el.getAttribute("data-tiles") || !window.L) {
    if (!window.L && note) note.hidden = false;
    return; // typed only
  }
  // text makes an element showing s as text: Leaflet takes a string as
  // HTML, and names come from API clients.
  function text(s) {
    var span = document.createElement("span");
    span.textContent = s;
    return span;
  }
  var map = L.map(el, { keyboard: true }).setView([52.52, 13.405], 11);
  var tiles = L.tileLayer(el.getAttribute("data-tiles"), { maxZoom: 19, attribution: el.getAttribute("data-attribution") }).addTo(map);
  tiles.once("tileerror", function () { if (note) note.hidden = false; });
  var bounds = L.latLngBounds([]);
  function layerOf(s, cls) {
    if (s.center) return L.circle(s.center, { radius: s.radius_m, className: cls });
    if (s.rings && s.rings.length) return L.polygon(s.rings, { className: cls });
    return null;
  }
  shapes.forEach(function (s) {
    if (s.id === editing && form) return; // drawn as the form's preview
    var layer = layerOf(s, "fence-shape");
    if (!layer) return;
    layer.addTo(map).bindTooltip(text(s.name), { sticky: true });
    if (!editing) layer.on("click", function () { if (!drawing) location.href = "/geofences/" + encodeURIComponent(s.id); });
    bounds.extend(layer.getBounds());
    window.fleetFences.drawn++;
  });
  window.fleetFences.map = map;
  if (!form) {
    if (bounds.isValid()) map.fitBounds(bounds, { padding: [30, 30], maxZoom: 16 });
    return;
  }

  var lat = form.querySelector("#lat"), lon = form.querySelector("#lon"), radius = form.querySelector("#radius_m");
  var corners = form.querySelector("#corners");
  var preview = null;
  function num(input) {
    var v = input.value.trim();
    return v === "" ? NaN : Number(v);
  }
  function readCorners() {
    var out = [];
    corners.value.split("\n").forEach(function (line) {
      var p = line.split(/[\s,;]+/).filter(function (x) { return x !== ""; });
      if (p.length === 2 && isFinite(+p[0]) && isFinite(+p[1])) out.push([+p[0], +p[1]]);
    });
    return out;
  }
  // redraw draws the form's shape as it stands.
  function redraw(fit) {
    if (preview) { map.removeLayer(preview); preview = null; }
    if (shape() === "circle") {
      var c = [num(lat), num(lon)], r = num(radius);
      if (isFinite(c[0]) && isFinite(c[1])) {
        preview = L.circle(c, { radius: isFinite(r) && r > 0 ? r : 1, className: "fence-preview" });
      }
    } else {
      var pts = readCorners();
      if (pts.length >= 2) preview = L.polygon(pts, { className: "fence-preview" });
      else if (pts.length === 1) preview = L.circleMarker(pts[0], { radius: 5, className: "fence-preview" });
    }
    if (preview) {
      preview.addTo(map);
      if (fit) map.fitBounds(preview.getBounds(), { padding: [30, 30], maxZoom: 16 });
    }
    window.fleetFences.preview = preview ? (shape() === "circle" ? "circle" : "polygon") : "";
    handlesFor(preview);
  }

  // Handles on the shape drawn: drag a polygon's corner, or a circle's
  // centre or edge, and the form's fields follow (they stay the way to
  // change it by keyboard).
  var handles = L.layerGroup().addTo(map);
  function handle(at, title, onDrag) {
    var m = L.marker(at, { draggable: true, keyboard: false, title: title,
      icon: L.divIcon({ className: "fence-handle", iconSize: [14, 14] }) }).addTo(handles);
    m.on("drag", function () { onDrag(m.getLatLng()); });
    m.on("dragend", function () { redraw(false); });
    return m;
  }
  function handlesFor(layer) {
    handles.clearLayers();
    window.fleetFences.handles = 0;
    if (!layer || drawing) return;
    if (shape() === "circle" && layer.getRadius) {
      var c = layer.getLatLng(), r = layer.getRadius();
      var edge = L.latLng(c.lat, c.lng + r / (111320 * Math.cos(c.lat * Math.PI / 180)));
      handle(c, "The circle's centre", function (p) {
        lat.value = round(p.lat);
        lon.value = round(p.lng);
        layer.setLatLng(p);
      });
      handle(edge, "The circle's edge", function (p) {
        radius.value = Math.max(1, Math.round(map.distance(layer.getLatLng(), p)));
        layer.setRadius(Number(radius.value));
      });
      window.fleetFences.handles = 2;
    } else if (shape() === "polygon" && layer.getLatLngs) {
      var pts = readCorners();
      pts.forEach(function (pt, i) {
        handle(pt, "Corner " + (i + 1), function (p) {
          pts[i] = [round(p.lat), round(p.lng)];
          corners.value = pts.map(function (q) { return q[0] + ", " + q[1]; }).join("\n") + "\n";
          layer.setLatLngs(pts);
        });
      });
      window.fleetFences.handles = pts.length;
    }
  }
  // The form's shape, when it holds one (a geofence changed, a form sent
  // back with a mistake), is what the map shows first; else every shape.
  redraw(true);
  if (!preview && bounds.isValid()) map.fitBounds(bounds, { padding: [30, 30], maxZoom: 16 });
  form.addEventListener("input", function () { redraw(false); });
  form.addEventListener("change", function (e) {
    if (e.target.name === "shape") { showShape(); stop(); redraw(true); }
  });

  // The drawing tool.
  var tools = document.querySelector(".draw-tools");
  var draw = document.getElementById("draw"), clear = document.getElementById("clear-shape");
  var help = document.getElementById("draw-help");
  tools.hidden = false;
  var drawing = false, centreSet = false;
  function round(x) { return Math.round(x * 1e6) / 1e6; }
  function say(s) { help.textContent = s; }
  function stop() {
    drawing = false;
    draw.setAttribute("aria-pressed", "false");
    draw.textContent = "Draw on the map";
    el.classList.remove("drawing");
    say("");
    if (preview) handlesFor(preview);
  }
  draw.addEventListener("click", function () {
    if (drawing) { stop(); return; }
    drawing = true;
    centreSet = false;
    handles.clearLayers();
    draw.setAttribute("aria-pressed", "true");
    draw.textContent = "Stop drawing";
    el.classList.add("drawing");
    if (shape() === "circle") say("Click the circle's centre on the map.");
    else { corners.value = ""; redraw(false); say("Click each corner on the map, then Stop drawing."); }
  });
  clear.addEventListener("click", function () {
    lat.value = lon.value = radius.value = corners.value = "";
    redraw(false);
  });
  map.on("click", function (e) {
    if (!drawing) return;
    var p = e.latlng;
    if (shape() === "circle") {
      if (!centreSet) {
        lat.value = round(p.lat);
        lon.value = round(p.lng);
        centreSet = true;
        say("Now click the circle's edge.");
      } else {
        radius.value = Math.max(1, Math.round(map.distance([num(lat), num(lon)], p)));
        stop();
        say("The circle is drawn: its centre and radius are in the form.");
      }
    } else {
      corners.value += (corners.value && !/\n$/.test(corners.value) ? "\n" : "") + round(p.lat) + ", " + round(p.lng) + "\n";
      var n = readCorners().length;
      say(n + (n === 1 ? " corner" : " corners") + (n < 3 ? ": at least 3." : ". Stop drawing when it is done."));
    }
    redraw(false);
  });
})();
