package fleethttp

import (
	"bufio"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// durationBounds are the upper bounds, in seconds, of the request duration
// histogram's buckets.
var durationBounds = [...]float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// routeMetrics counts the requests of one route.
type routeMetrics struct {
	name    string
	byClass [6]atomic.Uint64 // by status / 100: 1xx ... 5xx (0 unused)
	buckets [len(durationBounds) + 1]atomic.Uint64
	sumNs   atomic.Uint64
}

// metrics is what a Handler counts: requests by route and status class,
// their durations, and those in flight. Counting is a few atomic adds.
type metrics struct {
	routes   []routeMetrics // [0] requests no route took: 401s before routing, 404s, /healthz...
	inFlight atomic.Int64
}

func newMetrics(rs []route) *metrics {
	m := &metrics{routes: make([]routeMetrics, len(rs)+1)}
	m.routes[0].name = "none"
	for i, rt := range rs {
		m.routes[i+1].name = rt.method + " " + rt.pattern
	}
	return m
}

func (m *metrics) observe(route int, status int, d time.Duration) {
	rm := &m.routes[route]
	if c := status / 100; c >= 1 && c <= 5 {
		rm.byClass[c].Add(1)
	}
	s := d.Seconds()
	i := 0
	for i < len(durationBounds) && s > durationBounds[i] {
		i++
	}
	rm.buckets[i].Add(1)
	rm.sumNs.Add(uint64(d))
}

// Metrics returns a handler that serves the Handler's counters in the
// Prometheus text format (version 0.0.4):
//
//	fleet_http_requests_total{route,code}            counter, code is 2xx, 4xx...
//	fleet_http_request_duration_seconds{route}       histogram
//	fleet_http_requests_in_flight                    gauge
//
// route is the route's pattern ("GET /v1/vehicles/{vehicle_id}"), or "none"
// for requests no route took (refused before routing, unknown paths,
// /healthz). Serve it on a listener of its own, away from the API.
func (h *Handler) Metrics() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		b := bufio.NewWriter(w)
		defer b.Flush()
		m := h.metrics
		b.WriteString("# HELP fleet_http_requests_total Requests answered, by route and status class.\n# TYPE fleet_http_requests_total counter\n")
		for i := range m.routes {
			rm := &m.routes[i]
			for c := 1; c <= 5; c++ {
				if n := rm.byClass[c].Load(); n > 0 {
					b.WriteString(`fleet_http_requests_total{route="` + rm.name + `",code="` + strconv.Itoa(c) + `xx"} ` + strconv.FormatUint(n, 10) + "\n")
				}
			}
		}
		b.WriteString("# HELP fleet_http_request_duration_seconds Time from a request's arrival to the end of its answer.\n# TYPE fleet_http_request_duration_seconds histogram\n")
		for i := range m.routes {
			rm := &m.routes[i]
			var cum uint64
			var counts [len(durationBounds) + 1]uint64
			for j := range counts {
				counts[j] = rm.buckets[j].Load()
				cum += counts[j]
			}
			if cum == 0 {
				continue
			}
			lbl := `{route="` + rm.name + `",le="`
			cum = 0
			for j, bound := range durationBounds {
				cum += counts[j]
				b.WriteString("fleet_http_request_duration_seconds_bucket" + lbl + strconv.FormatFloat(bound, 'g', -1, 64) + `"} ` + strconv.FormatUint(cum, 10) + "\n")
			}
			cum += counts[len(durationBounds)]
			b.WriteString("fleet_http_request_duration_seconds_bucket" + lbl + `+Inf"} ` + strconv.FormatUint(cum, 10) + "\n")
			b.WriteString(`fleet_http_request_duration_seconds_sum{route="` + rm.name + `"} ` + strconv.FormatFloat(float64(rm.sumNs.Load())/1e9, 'g', -1, 64) + "\n")
			b.WriteString(`fleet_http_request_duration_seconds_count{route="` + rm.name + `"} ` + strconv.FormatUint(cum, 10) + "\n")
		}
		b.WriteString("# HELP fleet_http_requests_in_flight Requests being served.\n# TYPE fleet_http_requests_in_flight gauge\n")
		b.WriteString("fleet_http_requests_in_flight " + strconv.FormatInt(m.inFlight.Load(), 10) + "\n")
	})
}
