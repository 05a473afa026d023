package fleethttp

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
// their durations, and those in flight. Counting is a few atomic adds; the
// Prometheus collectors read the counters only when scraped.
type metrics struct {
	routes   []routeMetrics // [0] requests no route took: 401s before routing, 404s, /healthz...
	inFlight atomic.Int64

	regOnce sync.Once
	reg     *prometheus.Registry
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

// Metrics returns a handler that serves the Handler's metrics in the
// Prometheus exposition formats (docs/operations.md, "Metrics", lists them all):
//
//	fleet_http_requests_total{route,code}            counter, code is 2xx, 4xx...
//	fleet_http_request_duration_seconds{route}       histogram
//	fleet_http_requests_in_flight                    gauge
//	fleet_points_ingested_total                      counter
//	fleet_quota_rejections_total{subject}            counter, subject is key or address
//	fleet_stream_clients                             gauge
//	fleet_device_reports_total                       counter, messages of registered devices
//	fleet_device_unknown_total                       counter, logins and messages of unknown identifiers
//	fleet_device_unknown_recorded_total              counter, of those, recorded for the operator
//	fleet_job_duration_seconds{job}                  histogram of the background jobs' runs
//	fleet_job_failures_total{job}                    counter
//	fleet_store_connections{pool,state}              gauge, state is in_use or idle (SQL stores)
//	fleet_store_connections_max{pool}                gauge
//	fleet_store_waits_total{pool}                    counter
//	fleet_store_wait_seconds_total{pool}             counter
//	fleet_webhook_deliveries_total{outcome}          counter (with WatchSender)
//	fleet_webhook_deliveries_held                    gauge (with WatchSender)
//	go_*, process_*                                  the Go runtime and the process
//
// route is the route's pattern ("GET /v1/vehicles/{vehicle_id}"), or "none"
// for requests no route took (refused before routing, unknown paths,
// /healthz). Every label takes a bounded set of values: no ids. Serve it on
// a listener of its own, away from the API.
func (h *Handler) Metrics() http.Handler {
	return promhttp.HandlerFor(h.Registry(), promhttp.HandlerOpts{})
}

// Registry returns the registry Metrics serves, with the Handler's, the
// service's, the store's and the Go runtime's and process's collectors; a
// program that embeds the handler may register its own.
func (h *Handler) Registry() *prometheus.Registry {
	m := h.metrics
	m.regOnce.Do(func() {
		m.reg = prometheus.NewRegistry()
		m.reg.MustRegister(
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
			httpCollector{m},
			serviceCollector{h.svc},
		)
		if cs, ok := h.svc.Store().(collectorStore); ok {
			m.reg.MustRegister(cs.Collectors()...)
		}
	})
	return m.reg
}

// collectorStore is a store with figures of its own (sqlstore: its
// connection pools, round trips and group commits), which the metrics
// serve beside the service's.
type collectorStore interface {
	Collectors() []prometheus.Collector
}

// WatchSender adds the sender's figures to the metrics: deliveries by
// outcome and those it holds.
func (h *Handler) WatchSender(s *Sender) { h.Registry().MustRegister(senderCollector{s}) }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descRequests = desc("fleet_http_requests_total", "Requests answered, by route and status class.", "route", "code")
	descDuration = desc("fleet_http_request_duration_seconds", "Time from a request's arrival to the end of its answer.", "route")
	descInFlight = desc("fleet_http_requests_in_flight", "Requests being served.")
	classLabels  = [6]string{"", "1xx", "2xx", "3xx", "4xx", "5xx"}
)

// httpCollector reads a Handler's request counters.
type httpCollector struct{ m *metrics }

func (c httpCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRequests
	ch <- descDuration
	ch <- descInFlight
}

func (c httpCollector) Collect(ch chan<- prometheus.Metric) {
	for i := range c.m.routes {
		rm := &c.m.routes[i]
		for cl := 1; cl <= 5; cl++ {
			if n := rm.byClass[cl].Load(); n > 0 { // routes not called are left out
				ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n), rm.name, classLabels[cl])
			}
		}
	}
	for i := range c.m.routes {
		rm := &c.m.routes[i]
		var counts [len(durationBounds) + 1]uint64
		var total uint64
		for j := range counts {
			counts[j] = rm.buckets[j].Load()
			total += counts[j]
		}
		if total == 0 {
			continue
		}
		buckets := make(map[float64]uint64, len(durationBounds))
		var cum uint64
		for j, bound := range durationBounds {
			cum += counts[j]
			buckets[bound] = cum
		}
		ch <- prometheus.MustNewConstHistogram(descDuration, total, float64(rm.sumNs.Load())/1e9, buckets, rm.name)
	}
	ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(c.m.inFlight.Load()))
}

var (
	descPoints        = desc("fleet_points_ingested_total", "Location points stored (duplicates of stored points not included).")
	descRejections    = desc("fleet_quota_rejections_total", "Requests refused for the hourly allowance: of an API key (subject=key) or of a client address without a valid key (subject=address).", "subject")
	descStreamClients = desc("fleet_stream_clients", "Live location streams open.")
	descDeviceReports = desc("fleet_device_reports_total", "Messages of positions from registered devices (trackers and phone apps) handled, acknowledged or not.")
	descUnknown       = desc("fleet_device_unknown_total", "Logins and messages of device identifiers no device is registered with.")
	descUnknownKept   = desc("fleet_device_unknown_recorded_total", "Of the attempts of unknown identifiers, those recorded in the operator's list (fleetserver devices unknown); the others came from an address past its rate.")
	descAttrsDropped  = desc("fleet_device_attributes_dropped_total", "Attributes of devices' positions dropped for breaking API.md §14's rules (a name outside the rule, a value not finite, text too long, past 64 a point): the position is kept without them.")
	descJobDuration   = desc("fleet_job_duration_seconds", "How long the background jobs' runs took: flush (usage counts), check_streams (keys and share links of live streams), sweep (vehicle statuses and offline alerts), check_maintenance, purge.", "job")
	descJobFailures   = desc("fleet_job_failures_total", "Background job runs that failed (the log says why).", "job")
)

// serviceCollector reads the service's Stats.
type serviceCollector struct{ svc *fleet.Service }

func (c serviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPoints, descRejections, descStreamClients, descDeviceReports, descUnknown, descUnknownKept, descAttrsDropped,
		descJobDuration, descJobFailures} {
		ch <- d
	}
}

func (c serviceCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.svc.Stats()
	ch <- prometheus.MustNewConstMetric(descPoints, prometheus.CounterValue, float64(st.PointsIngested))
	ch <- prometheus.MustNewConstMetric(descRejections, prometheus.CounterValue, float64(st.QuotaRejections.Key), "key")
	ch <- prometheus.MustNewConstMetric(descRejections, prometheus.CounterValue, float64(st.QuotaRejections.Address), "address")
	ch <- prometheus.MustNewConstMetric(descStreamClients, prometheus.GaugeValue, float64(st.StreamClients))
	ch <- prometheus.MustNewConstMetric(descDeviceReports, prometheus.CounterValue, float64(st.Devices.Reports))
	ch <- prometheus.MustNewConstMetric(descUnknown, prometheus.CounterValue, float64(st.Devices.Unknown))
	ch <- prometheus.MustNewConstMetric(descUnknownKept, prometheus.CounterValue, float64(st.Devices.UnknownRecorded))
	ch <- prometheus.MustNewConstMetric(descAttrsDropped, prometheus.CounterValue, float64(st.DeviceAttributesDropped))
	for i, name := range fleet.JobNames {
		j := st.Jobs[i]
		buckets := make(map[float64]uint64, len(fleet.JobBounds))
		var cum uint64
		for b, bound := range fleet.JobBounds {
			cum += j.Buckets[b]
			buckets[bound] = cum
		}
		ch <- prometheus.MustNewConstHistogram(descJobDuration, j.Runs, j.Seconds, buckets, name)
		ch <- prometheus.MustNewConstMetric(descJobFailures, prometheus.CounterValue, float64(j.Failures), name)
	}
}

var (
	descDeliveries = desc("fleet_webhook_deliveries_total", "Webhook delivery attempts by outcome: delivered (2xx), refused (another status), unanswered (timeout, connection failed, address not allowed).", "outcome")
	descHeld       = desc("fleet_webhook_deliveries_held", "Webhook deliveries the sender has claimed and not yet recorded: waiting for their endpoint's turn or in flight.")
)

// senderCollector reads a Sender's figures.
type senderCollector struct{ s *Sender }

func (c senderCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descDeliveries
	ch <- descHeld
}

func (c senderCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	ch <- prometheus.MustNewConstMetric(descDeliveries, prometheus.CounterValue, float64(st.Delivered), "delivered")
	ch <- prometheus.MustNewConstMetric(descDeliveries, prometheus.CounterValue, float64(st.Refused), "refused")
	ch <- prometheus.MustNewConstMetric(descDeliveries, prometheus.CounterValue, float64(st.Unanswered), "unanswered")
	ch <- prometheus.MustNewConstMetric(descHeld, prometheus.GaugeValue, float64(st.Held))
}
