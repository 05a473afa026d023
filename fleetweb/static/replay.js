// A vehicle's day replayed on a Leaflet map. The page's data address
// answers the day's reports as columns of whole numbers, each the
// difference from the one before (replay.go's replayData); they are summed
// back here into typed arrays. Play runs the day's clock at the chosen
// speed (1× to 64×), the slider sets it, and the readout shows the report
// at that time: its time, speed, heading, odometer, position and whether
// the vehicle is on a trip or at a stop. The timeline under the slider
// draws the trips and stops; each trip's and stop's button in the tables
// goes to it. The page holds the day's first report in the same form
// (data-first): the first frame is drawn from it at once, while the day's
// reports load; Play and the slider wait for them.
(function () {
  "use strict";
  var root = document.getElementById("replay");
  if (!root) return;
  var state = { loaded: false, playing: false, n: 0, time: 0, index: 0, firstFrameMs: 0 };
  window.fleetReplay = state;
  var status = document.getElementById("replay-status");
  var play = document.getElementById("play"), speedSel = document.getElementById("replay-speed");
  var slider = document.getElementById("replay-time"), timeline = document.getElementById("timeline");
  var zone = root.getAttribute("data-zone") || "UTC";
  var ro = {};
  ["time", "speed", "heading", "odometer", "position", "doing", "attributes"].forEach(function (k) { ro[k] = document.getElementById("ro-" + k); });
  var fmt;
  try {
    fmt = new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  } catch (e) {
    fmt = new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
  }

  // sum turns a column of differences into values (NaN where null).
  function sum(col, scale, delta) {
    var out = new Float64Array(col.length), prev = 0;
    for (var i = 0; i < col.length; i++) {
      var x = col[i];
      if (x === null) { out[i] = NaN; continue; }
      if (delta) { prev += x; x = prev; }
      out[i] = x / scale;
    }
    return out;
  }

  var d, t, lat, lon, spd, hdg, odo, attrs, start = 0;

  // attrState turns the column of attribute changes into each report's
  // attributes (a report that changed nothing shares the one before's).
  function attrState(col) {
    var out = new Array(col.length), cur = {};
    for (var i = 0; i < col.length; i++) {
      var c = col[i];
      if (c && typeof c === "object") {
        cur = Object.assign({}, cur);
        for (var k in c) {
          if (c[k] === null) delete cur[k]; else cur[k] = c[k];
        }
      }
      out[i] = cur;
    }
    return out;
  }
  // attrText says a report's attributes in words: "Ignition: yes · Power (V): 12.6".
  function attrText(a) {
    var names = Object.keys(a || {}).sort(), out = [];
    names.forEach(function (k) {
      var v = a[k];
      out.push((d.attribute_names[k] || k) + ": " + (v === true ? "yes" : v === false ? "no" : String(v)));
    });
    return out.length ? out.join(" · ") : "—";
  }
  var map = null, marker = null, trail = null;
  var mapEl = document.getElementById("replay-map");

  function setup() {
    if (!mapEl.getAttribute("data-tiles") || !window.L) {
      if (!window.L) document.getElementById("map-note").hidden = false;
      return;
    }
    // A canvas draws the day's long trail faster than SVG; its shapes take
    // their colours from their options, not from the style sheet.
    map = L.map(mapEl, { keyboard: true, preferCanvas: true }).setView([52.52, 13.405], 11);
    var tiles = L.tileLayer(mapEl.getAttribute("data-tiles"), { maxZoom: 19, attribution: mapEl.getAttribute("data-attribution") }).addTo(map);
    tiles.once("tileerror", function () { document.getElementById("map-note").hidden = false; });
    state.map = map;
  }

  function fixed(x, digits) { return x.toFixed(digits); }
  // at finds the last report at or before time ms (binary search).
  function at(ms) {
    var lo = 0, hi = state.n - 1;
    if (ms <= t[0]) return 0;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (t[mid] <= ms) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function spanAt(list, ms) {
    for (var i = 0; i < list.length; i++) if (list[i].from <= ms && ms <= list[i].to) return list[i];
    return null;
  }
  // show draws the day at time ms: the marker between the reports around
  // it, and the readout of the report at it.
  function show(ms) {
    state.time = ms;
    var i = at(ms);
    state.index = i;
    var j = Math.min(i + 1, state.n - 1), f = 0;
    if (j > i && t[j] > t[i]) f = Math.max(0, Math.min(1, (ms - t[i]) / (t[j] - t[i])));
    var la = lat[i] + (lat[j] - lat[i]) * f, lo = lon[i] + (lon[j] - lon[i]) * f;
    if (marker) marker.setLatLng([la, lo]);
    slider.value = Math.round(ms / 1000);
    var when = fmt.format(new Date(start + t[i]));
    slider.setAttribute("aria-valuetext", when);
    ro.time.textContent = when;
    ro.speed.textContent = isNaN(spd[i]) ? "—" : fixed(spd[i], 1) + " km/h";
    ro.heading.textContent = isNaN(hdg[i]) ? "—" : Math.round(hdg[i]) + "°";
    ro.odometer.textContent = isNaN(odo[i]) ? "—" : fixed(odo[i], 1) + " km";
    ro.position.textContent = fixed(lat[i], 5) + ", " + fixed(lon[i], 5);
    var trip = spanAt(d.trips, t[i]), stop = trip ? null : spanAt(d.stops, t[i]);
    ro.doing.textContent = trip ? trip.label : stop ? stop.label : "—";
    ro.attributes.textContent = attrText(attrs[i]);
  }

  var last = 0;
  function frame(now) {
    if (!state.playing) return;
    var dt = last ? now - last : 0;
    last = now;
    var ms = state.time + dt * Number(speedSel.value);
    if (ms >= t[state.n - 1]) {
      show(t[state.n - 1]);
      pause("The day's last report.");
      return;
    }
    show(ms);
    requestAnimationFrame(frame);
  }
  function begin() {
    if (state.time >= t[state.n - 1]) show(t[0]);
    state.playing = true;
    play.textContent = "Pause";
    status.textContent = "Playing at " + speedSel.value + "×.";
    last = 0;
    requestAnimationFrame(frame);
  }
  function pause(why) {
    state.playing = false;
    play.textContent = "Play";
    status.textContent = why || "Paused.";
  }

  // simplify returns the day's track for its trail: the reports that the
  // line cannot go without within tol degrees (Douglas–Peucker), so that a
  // day of 86,400 reports draws as a few thousand points.
  function simplify(tol) {
    var keep = new Uint8Array(state.n), stack = [0, state.n - 1];
    keep[0] = keep[state.n - 1] = 1;
    while (stack.length) {
      var b = stack.pop(), a = stack.pop();
      var ax = lon[a], ay = lat[a], dx = lon[b] - ax, dy = lat[b] - ay, len2 = dx * dx + dy * dy;
      var far = -1, worst = tol * tol;
      for (var i = a + 1; i < b; i++) {
        var px = lon[i] - ax, py = lat[i] - ay, d2;
        if (len2 === 0) d2 = px * px + py * py;
        else {
          var c = (px * dy - py * dx);
          d2 = c * c / len2;
        }
        if (d2 > worst) { worst = d2; far = i; }
      }
      if (far > 0) { keep[far] = 1; stack.push(a, far, far, b); }
    }
    var out = [];
    for (var j = 0; j < state.n; j++) if (keep[j]) out.push([lat[j], lon[j]]);
    state.trailPoints = out.length;
    return out;
  }

  var timelineDrawn = false;
  // ready takes data: the day's first report alone (whole false), then the
  // whole day.
  function ready(whole) {
    if (whole) state.readyMs = performance.now(); // the data read: measured by the tests
    state.n = d.n;
    start = d.start;
    t = sum(d.t, 1, true);
    lat = sum(d.lat, 1e6, true);
    lon = sum(d.lon, 1e6, true);
    spd = sum(d.speed, 10, true);
    hdg = sum(d.heading, 1, false);
    odo = sum(d.odometer, 1000, true);
    attrs = attrState(d.attributes || []);
    state.loaded = whole;
    if (!state.n) {
      status.textContent = "No reports on this day: nothing to replay.";
      return;
    }
    // The timeline: trips and stops over the day, where the slider runs.
    var len = d.length;
    function bar(s, cls) {
      var b = document.createElement("span");
      b.className = cls;
      b.style.left = (100 * s.from / len) + "%";
      b.style.width = Math.max(0.2, 100 * (s.to - s.from) / len) + "%";
      b.title = s.label;
      timeline.appendChild(b);
    }
    if (!timelineDrawn) {
      d.stops.forEach(function (s) { bar(s, "tl-stop"); });
      d.trips.forEach(function (s) { bar(s, "tl-trip"); });
      timelineDrawn = true;
    }
    slider.max = Math.ceil(len / 1000) - 1;
    if (!whole) {
      // The first frame: the map where the day went (its trips' and
      // stops' places), the marker at the first report.
      if (map) {
        var bb = JSON.parse(root.getAttribute("data-bounds") || "null");
        if (bb) map.fitBounds([[bb[0], bb[1]], [bb[2], bb[3]]], { padding: [30, 30], maxZoom: 16 });
        marker = L.circleMarker([lat[0], lon[0]], { radius: 8, color: "#fff", weight: 3, fillColor: "#cf222e", fillOpacity: 1 }).addTo(map);
      }
      show(t[0]);
      firstFrame("page");
      return;
    }
    slider.disabled = false;
    play.disabled = false;
    document.querySelectorAll("button.seek").forEach(function (b) {
      b.disabled = false;
      b.addEventListener("click", function () {
        show(Math.max(t[0], Number(b.getAttribute("data-at"))));
        if (/^Play/.test(b.textContent) && !state.playing) begin();
        root.scrollIntoView({ block: "start" });
      });
    });
    if (map) {
      // The first frame: the map fitted to the day and the marker at its
      // first report; the trail follows in the next frame.
      var s = -90, n = 90, w = 180, e = -180;
      for (var i = 0; i < state.n; i++) {
        if (lat[i] > s) s = lat[i];
        if (lat[i] < n) n = lat[i];
        if (lon[i] > e) e = lon[i];
        if (lon[i] < w) w = lon[i];
      }
      map.fitBounds([[n, w], [s, e]], { padding: [30, 30], maxZoom: 16 });
      if (!marker) marker = L.circleMarker([lat[0], lon[0]], { radius: 8, color: "#fff", weight: 3, fillColor: "#cf222e", fillOpacity: 1 }).addTo(map);
      setTimeout(function () {
        trail = L.polyline(simplify(2e-5), { color: "#0b57d0", opacity: 0.55, weight: 3, interactive: false }).addTo(map);
        marker.bringToFront();
        state.trailMs = performance.now();
      }, 0);
    }
    show(t[0]);
    status.textContent = (d.more ? "The day's first " : "") + state.n.toLocaleString("en-US") + " reports" + (d.more ? " are replayed." : ". Press Play.");
    firstFrame("data");
  }
  // firstFrame records, once, when the first frame is drawn and from what
  // (the page's first report, or the day's data): measured by the tests.
  function firstFrame(from) {
    if (state.firstFrom) return;
    state.firstFrom = from;
    requestAnimationFrame(function () { state.firstFrameMs = performance.now(); });
  }

  play.addEventListener("click", function () { if (state.playing) pause(); else begin(); });
  speedSel.addEventListener("change", function () { if (state.playing) status.textContent = "Playing at " + speedSel.value + "×."; });
  slider.addEventListener("input", function () { show(Number(slider.value) * 1000); });

  setup();
  var first = root.getAttribute("data-first");
  if (first) {
    d = JSON.parse(first);
    ready(false);
  }
  fetch(root.getAttribute("data-src"), { credentials: "same-origin" }).then(function (res) {
    return res.json().then(function (body) {
      if (!res.ok) throw new Error(body.error || "The day's reports could not be read.");
      return body;
    });
  }).then(function (body) { d = body; ready(true); }, function (e) {
    status.textContent = e.message || "The day's reports could not be read.";
  });
})();
