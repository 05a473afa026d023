package fleethttp_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// exposition scrapes the handler's metrics in the text format.
func (e *env) exposition() []byte {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.h.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		e.t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// families parses an exposition with Prometheus' own parser.
func families(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, b)
	}
	return fams
}

// value is the value of the sample of family name whose labels include
// want (name=value pairs); ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsExposition: the metrics listener serves the runtime's, the
// process's and the domain's figures — points ingested, quota rejections
// of keys and addresses, live stream clients, device messages and unknown
// identifiers, background job durations,
// webhook deliveries and the sender's queue — in an exposition that
// Prometheus' parser reads and `promtool check metrics` passes (when
// promtool is installed), with no id in any label.
func TestMetricsExposition(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(T0)
	e := newEnvOn(t, memstore.New(), clock, func(o *fleet.Options) { o.AddressLimit = 2; o.SweepEvery = 10 * time.Millisecond })
	a, key := e.account(fleet.PlanFree)
	veh := e.vehicle(key, "Metered")
	pts := []map[string]any{}
	for i := range 3 {
		pts = append(pts, map[string]any{"latitude": 52.5, "longitude": 13.4, "timestamp": T0.Add(-time.Duration(i+1) * time.Minute).Format(time.RFC3339)})
	}
	r := e.do("POST", "/v1/vehicles/"+veh+"/locations", key, map[string]any{"locations": pts})
	is.Equal(r.status, 200)
	stream := e.openStream(key, "", "")
	// A device's message, and an unknown identifier's.
	e.do("POST", "/v1/devices", key, map[string]any{"identifier": "356307042441013", "vehicle_id": veh})
	_, err := e.svc.DeviceEdge().Report(context.Background(), fleet.DeviceReport{Identifier: "356307042441013", Protocol: "teltonika",
		RemoteAddr: "192.0.2.1:1", Positions: []fleet.DevicePosition{{Latitude: 52.5, Longitude: 13.4, Timestamp: T0.Add(-time.Second), Valid: true}}})
	is.NoErr(err)
	known, err := e.svc.DeviceEdge().Known(context.Background(), "999999999999999", "gt06", "192.0.2.2:1")
	is.NoErr(err)
	is.True(!known)
	for range 3 {
		e.do("GET", "/v1/account", "fk_live_not_a_key", nil) // the third is over the address brake
	}
	// Over the key's allowance (free: 1000 an hour), straight through the edge.
	p, err := e.svc.Authenticate(context.Background(), key)
	is.NoErr(err)
	for i := 0; ; i++ {
		q, err := e.svc.Edge().Admit(context.Background(), p)
		is.NoErr(err)
		if !q.Allowed {
			break // one refusal
		}
		is.True(i <= a.Plan.Limits().RequestsPerHour)
	}
	sender := fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true})
	e.h.WatchSender(sender)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, _ := value(families(t, e.exposition()), "fleet_job_duration_seconds", "job", "sweep"); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no sweep counted within 10 s of Run starting")
		}
		time.Sleep(10 * time.Millisecond) // Run's ticker is real time
	}
	stop()
	<-done

	b := e.exposition()
	fams := families(t, b)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"fleet_points_ingested_total", nil, 4},
		{"fleet_device_reports_total", nil, 1},
		{"fleet_device_unknown_total", nil, 1},
		{"fleet_device_unknown_recorded_total", nil, 1},
		{"fleet_quota_rejections_total", []string{"subject", "address"}, 1},
		{"fleet_quota_rejections_total", []string{"subject", "key"}, 1},
		{"fleet_stream_clients", nil, 1},
		{"fleet_webhook_deliveries_total", []string{"outcome", "delivered"}, 0},
		{"fleet_webhook_deliveries_held", nil, 0},
		{"fleet_http_requests_total", []string{"route", "POST /v1/vehicles/{vehicle_id}/locations", "code", "2xx"}, 1},
		{"fleet_http_requests_in_flight", nil, 1}, // the open stream
	} {
		got, ok := value(fams, c.name, c.labels...)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes",
		"fleet_http_request_duration_seconds", "fleet_job_failures_total"} {
		_, ok := fams[name]
		is.True(ok) // present
	}
	// Bounded labels: no id of an account, key, vehicle... in any of them.
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, prefix := range []string{"acc_", "veh_", "key_", "whk_", "evt_"} {
					if strings.Contains(l.GetValue(), prefix) {
						t.Errorf("%s has a label with an id: %s=%q", f.GetName(), l.GetName(), l.GetValue())
					}
				}
			}
		}
	}
	stream.cancel()

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool is not installed: the exposition was checked with Prometheus' text parser only")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
