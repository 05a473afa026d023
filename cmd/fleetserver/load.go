package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleetdevice"
)

// `fleetserver load`: a load generator that sizes a deployment. It plays N
// devices, each reporting every T seconds, plus live-stream readers and API
// readers, against a running server, and prints what the clients saw.

func loadCommand() command {
	return command{
		name:    "load",
		summary: "put a simulated fleet's load on a server and measure it",
		about: "Simulates --devices vehicles, each posting a report every --interval (one point, or --batch\n" +
			"points spread over the interval, to POST /v1/vehicles/{id}/locations), --streams live-stream\n" +
			"readers (GET /v1/vehicles/locations/stream) and --readers API readers (GET /v1/vehicles/locations,\n" +
			"the snapshot, every --read-interval each), against the server at --url with the key --key (which\n" +
			"needs vehicles:read, vehicles:write, locations:read and locations:write). The vehicles are the\n" +
			"account's vehicles named load-0, load-1...; missing ones are created first.\n\n" +
			"Devices start spread evenly over the first interval. A report's latency runs from the moment it\n" +
			"was due (not from when a connection was free), so a server that falls behind shows it. While it\n" +
			"runs, a progress line every --progress goes to stderr; at the end it prints, for reports and\n" +
			"reads, the throughput, latency percentiles (p50, p95, p99, max) and errors by status, and for\n" +
			"streams the lag from a report's timestamp (when it was sent) to its delivery on each stream.\n" +
			"It exits non-zero when --max-p99 is set and the reports' p99 is above it.\n\n" +
			"With --protocol teltonika, gt06, h02, queclink, gps103 or osmand the devices are trackers (or\n" +
			"phone apps) of that protocol instead, reporting to the server's device listener at --device-addr\n" +
			"(by default the host of --url and the protocol's conventional port), one connection each; each\n" +
			"vehicle load-N gets a device, registered through the API first (devices:read and devices:write)\n" +
			"with an identifier of its own (15 digits from 9 and the protocol's place; osmand: load-osmand-N;\n" +
			"reused on the next run). A report's latency runs to its acknowledgement, which the server writes\n" +
			"once the report is stored; for H02, Queclink and GPS103, whose reports need no acknowledgement, to\n" +
			"the answer of a heartbeat sent right behind it. Reports that got no acknowledgement are counted by what\n" +
			"happened: refused (the login), closed (by the server), error, dial_error, missed.",
		example: "fleetserver load --url http://localhost:8080 --key fk_live_... --devices 2000 --interval 10s --duration 2m\n" +
			"  fleetserver load --url http://localhost:8080 --key fk_live_... --protocol teltonika --devices 10000 --interval 10s --streams 0 --readers 0",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			var o loadOptions
			f.fs.StringVar(&o.url, "url", "", "the server's base `URL`")
			f.fs.StringVar(&o.key, "key", "", "an API `key` of the account to load")
			f.fs.IntVar(&o.devices, "devices", 100, "how many devices report")
			f.fs.StringVar(&o.protocol, "protocol", "api", "what the devices speak: `NAME`, api (POST /v1/vehicles/{id}/locations), or a device protocol: teltonika, gt06, h02, queclink, gps103, osmand")
			f.fs.StringVar(&o.deviceAddr, "device-addr", "", "the device listener of --protocol, `host:port` (default: the host of --url and the protocol's conventional port)")
			f.fs.DurationVar(&o.interval, "interval", 10*time.Second, "how often each device reports")
			f.fs.IntVar(&o.batch, "batch", 1, "points per report")
			f.fs.IntVar(&o.streams, "streams", 1, "live-stream readers")
			f.fs.IntVar(&o.readers, "readers", 1, "API readers")
			f.fs.DurationVar(&o.readInterval, "read-interval", time.Second, "how often each API reader reads")
			f.fs.DurationVar(&o.duration, "duration", time.Minute, "how long to measure, after the vehicles exist")
			f.fs.IntVar(&o.conns, "conns", 64, "at most this many connections for reports and reads")
			f.fs.DurationVar(&o.progress, "progress", 5*time.Second, "how often to print the progress line (0: never)")
			f.fs.DurationVar(&o.maxP99, "max-p99", 0, "fail when the reports' p99 latency is above this (0: never)")
			f.fromEnv("url", "key")
			f.require("url", "key")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("load", args); err != nil {
					return err
				}
				if err := o.check(); err != nil {
					return err
				}
				r, err := runLoad(ctx, o, c.stderr)
				if err != nil {
					return err
				}
				r.print(c.stdout)
				if o.maxP99 > 0 && r.reports.percentile(99) > o.maxP99 {
					return fmt.Errorf("reports' p99 %s is above --max-p99 %s", fmtDur(r.reports.percentile(99)), o.maxP99)
				}
				return nil
			}
		},
	}
}

type loadOptions struct {
	url, key, protocol, deviceAddr           string
	devices, batch, streams, readers, conns  int
	interval, readInterval, duration, maxP99 time.Duration
	progress                                 time.Duration
}

func (o *loadOptions) check() error {
	switch {
	case o.devices < 0 || o.streams < 0 || o.readers < 0:
		return usagef("load", "--devices, --streams and --readers must not be negative")
	case o.batch < 1 || o.batch > fleet.MaxPointsPerVehicleBatch:
		return usagef("load", "--batch must be 1 to %d", fleet.MaxPointsPerVehicleBatch)
	case o.interval <= 0 || o.readInterval <= 0 || o.duration <= 0:
		return usagef("load", "--interval, --read-interval and --duration must be positive")
	case o.conns < 1:
		return usagef("load", "--conns must be at least 1")
	case !strings.HasPrefix(o.url, "http://") && !strings.HasPrefix(o.url, "https://"):
		return usagef("load", "--url must be an http:// or https:// URL")
	case !slices.Contains(loadProtocols(), o.protocol):
		return usagef("load", "--protocol must be one of %s, not %q", strings.Join(loadProtocols(), ", "), o.protocol)
	case o.protocol == fleetdevice.OsmAndName && o.batch != 1:
		return usagef("load", "--batch must be 1 with --protocol osmand (a request carries one position)")
	case o.protocol == "api" && o.deviceAddr != "":
		return usagef("load", "--device-addr needs --protocol")
	}
	o.url = strings.TrimSuffix(strings.TrimSuffix(o.url, "/"), "/v1")
	if o.protocol != "api" {
		addr, err := deviceAddrFor(*o)
		if err != nil {
			return usagef("load", "%v", err)
		}
		o.deviceAddr = addr
	}
	return nil
}

// series collects one kind of request's outcomes.
type series struct {
	mu       sync.Mutex
	lat      []time.Duration // of the successful ones
	byStatus map[string]int  // "200", "429", "error"...
}

func newSeries() *series { return &series{byStatus: map[string]int{}} }

func (s *series) add(status string, d time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byStatus[status]++
	if ok {
		s.lat = append(s.lat, d)
	}
}

// snapshot returns a sorted copy of the latencies and the counts.
func (s *series) snapshot() ([]time.Duration, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lat := slices.Clone(s.lat)
	slices.Sort(lat)
	return lat, maps(s.byStatus)
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *series) percentile(p float64) time.Duration {
	lat, _ := s.snapshot()
	return pct(lat, p)
}

// pct is the p-th percentile of sorted (nearest rank).
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// loadResult is what a run measured.
type loadResult struct {
	o                      loadOptions
	elapsed                time.Duration
	reports, reads, stream *series
	points                 int
}

func runLoad(ctx context.Context, o loadOptions, progress io.Writer) (*loadResult, error) {
	tr := &http.Transport{MaxConnsPerHost: o.conns, MaxIdleConnsPerHost: o.conns, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	ids, err := loadVehicles(ctx, o, hc, progress)
	if err != nil {
		return nil, err
	}
	var idents []string // the devices' identifiers, with --protocol
	if o.protocol != "api" {
		raiseOpenFiles() // a connection a device
		if idents, err = loadDevices(ctx, o, hc, ids, progress); err != nil {
			return nil, err
		}
	}
	// OsmAnd's devices have a connection each, kept between reports.
	osmandHC := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(o.devices, 1), MaxConnsPerHost: max(o.devices, 1), IdleConnTimeout: time.Minute}, Timeout: time.Minute}
	defer osmandHC.CloseIdleConnections()
	r := &loadResult{o: o, reports: newSeries(), reads: newSeries(), stream: newSeries()}
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()

	// Streams have their own connections (each holds one for the run).
	streamHC := &http.Client{Transport: &http.Transport{}}
	streamsUp := make(chan struct{}, o.streams)
	for range o.streams {
		wg.Go(func() { followStream(ctx, o, streamHC, r.stream, streamsUp) })
	}
	for range o.streams { // reports start once the streams listen
		select {
		case <-streamsUp:
		case <-ctx.Done():
		}
	}
	start = time.Now()
	var pointsMu sync.Mutex
	for i, id := range ids {
		wg.Go(func() {
			first := start.Add(o.interval * time.Duration(i) / time.Duration(len(ids)))
			var n int
			switch o.protocol {
			case "api":
				n = device(ctx, o, hc, id, first, r.reports)
			case fleetdevice.OsmAndName:
				n = osmandDevice(ctx, o, osmandHC, idents[i], first, r.reports)
			default:
				n = streamDevice(ctx, o, idents[i], first, r.reports)
			}
			pointsMu.Lock()
			r.points += n
			pointsMu.Unlock()
		})
	}
	for i := range o.readers {
		wg.Go(func() {
			reader(ctx, o, hc, start.Add(o.readInterval*time.Duration(i)/time.Duration(o.readers)), r.reads)
		})
	}
	if o.progress > 0 {
		wg.Go(func() {
			t := time.NewTicker(o.progress)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					fmt.Fprintln(progress, r.progressLine(time.Since(start)))
				}
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	return r, nil
}

// loadVehicles finds the account's vehicles load-0... and creates the
// missing ones.
func loadVehicles(ctx context.Context, o loadOptions, hc *http.Client, progress io.Writer) ([]string, error) {
	client := fleetclient.NewClient(o.url, o.key, fleetclient.WithHTTPClient(hc))
	byName := map[string]string{}
	for v, err := range client.Vehicles(ctx, fleetclient.VehicleQuery{}) {
		if err != nil {
			return nil, fmt.Errorf("list vehicles: %w", err)
		}
		if strings.HasPrefix(v.Name, "load-") {
			byName[v.Name] = v.ID
		}
	}
	ids := make([]string, o.devices)
	var missing []int
	for i := range ids {
		if id, ok := byName["load-"+strconv.Itoa(i)]; ok {
			ids[i] = id
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(progress, "creating %d vehicles\n", len(missing))
	}
	err := inParallel(missing, func(i int) error {
		v, err := client.CreateVehicle(ctx, fleet.Vehicle{Name: "load-" + strconv.Itoa(i)})
		if err != nil {
			return fmt.Errorf("create vehicle load-%d: %w", i, err)
		}
		ids[i] = v.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// device reports for vehicle id every o.interval from first on, and
// returns how many points it sent.
func device(ctx context.Context, o loadOptions, hc *http.Client, id string, first time.Time, s *series) int {
	points := 0
	lat, lon := 48.85+float64(len(id)%7)/100, 2.35
	var body bytes.Buffer
	for due := first; ; due = due.Add(o.interval) {
		if !sleepUntil(ctx, due) {
			return points
		}
		if late := time.Since(due); late > o.interval {
			// Far behind (the previous report took longer than the
			// interval): skip to the next due time, counted as missed.
			s.add("missed", 0, false)
			continue
		}
		body.Reset()
		body.WriteString(`{"locations":[`)
		now := time.Now().UTC()
		for k := range o.batch {
			if k > 0 {
				body.WriteByte(',')
			}
			lat += 0.0001
			ts := now.Add(-o.interval * time.Duration(o.batch-1-k) / time.Duration(o.batch))
			fmt.Fprintf(&body, `{"latitude":%.6f,"longitude":%.6f,"timestamp":"%s","speed":%d,"heading":90}`,
				lat, lon, ts.Format(time.RFC3339Nano), 30+k%20)
		}
		body.WriteString(`]}`)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url+"/v1/vehicles/"+id+"/locations", bytes.NewReader(body.Bytes()))
		if err != nil {
			s.add("error", 0, false)
			return points
		}
		req.Header.Set("Authorization", "Bearer "+o.key)
		req.Header.Set("Content-Type", "application/json")
		status, ok := send(hc, req)
		if ctx.Err() != nil && !ok {
			return points // cut by the end of the run: not counted
		}
		s.add(status, time.Since(due), ok)
		if ok {
			points += o.batch
		}
	}
}

// reader reads the snapshot every o.readInterval from first on.
func reader(ctx context.Context, o loadOptions, hc *http.Client, first time.Time, s *series) {
	for due := first; ; due = due.Add(o.readInterval) {
		if !sleepUntil(ctx, due) {
			return
		}
		if time.Since(due) > o.readInterval {
			s.add("missed", 0, false)
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.url+"/v1/vehicles/locations?limit=100", nil)
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+o.key)
		status, ok := send(hc, req)
		if ctx.Err() != nil && !ok {
			return
		}
		s.add(status, time.Since(due), ok)
	}
}

// send sends req, reads the answer whole, and returns its status ("error"
// when none came) and whether it was a 2xx.
func send(hc *http.Client, req *http.Request) (string, bool) {
	res, err := hc.Do(req)
	if err != nil {
		return "error", false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return strconv.Itoa(res.StatusCode), res.StatusCode/100 == 2
}

// followStream reads the live stream until ctx ends, recording each
// report's lag from its timestamp; it signals up once connected.
func followStream(ctx context.Context, o loadOptions, hc *http.Client, s *series, up chan<- struct{}) {
	client := fleetclient.NewClient(o.url, o.key, fleetclient.WithHTTPClient(hc))
	// The client's Stream connects lazily: signal when the first answer
	// could arrive, after one quick request that proves the key works.
	if _, err := client.Account(ctx); err != nil {
		s.add("error", 0, false)
		up <- struct{}{}
		return
	}
	up <- struct{}{}
	for ll, err := range client.Stream(ctx) {
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
				s.add("error", 0, false)
			}
			return
		}
		s.add("delivered", time.Since(ll.Location.Timestamp), true)
	}
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (r *loadResult) progressLine(elapsed time.Duration) string {
	lat, st := r.reports.snapshot()
	slat, _ := r.stream.snapshot()
	bad := 0
	for k, n := range st {
		if !strings.HasPrefix(k, "2") && k != "acked" {
			bad += n
		}
	}
	return fmt.Sprintf("%6s  reports %d (%.0f/s)  p50 %s  p99 %s  not ok %d  stream lag p99 %s",
		elapsed.Truncate(time.Second), len(lat), float64(len(lat))/elapsed.Seconds(),
		fmtDur(pct(lat, 50)), fmtDur(pct(lat, 99)), bad, fmtDur(pct(slat, 99)))
}

func (r *loadResult) print(w io.Writer) {
	o := r.o
	over := "the API"
	if o.protocol != "api" {
		over = o.protocol + " at " + o.deviceAddr
	}
	fmt.Fprintf(w, "load: %d devices (%s) every %s, %d point(s) a report (%.0f reports/s offered), %d streams, %d readers every %s, %s\n",
		o.devices, over, o.interval, o.batch, float64(o.devices)/o.interval.Seconds(), o.streams, o.readers, o.readInterval, r.elapsed.Truncate(time.Millisecond))
	line := func(name string, s *series, unit string) {
		lat, st := s.snapshot()
		fmt.Fprintf(w, "%-8s %8d ok  %9.1f/s  p50 %-9s p95 %-9s p99 %-9s max %-9s %s\n", name, len(lat),
			float64(len(lat))/r.elapsed.Seconds(), fmtDur(pct(lat, 50)), fmtDur(pct(lat, 95)), fmtDur(pct(lat, 99)),
			fmtDur(pct(lat, 100)), statusLine(st, unit))
	}
	line("reports", r.reports, "")
	fmt.Fprintf(w, "points   %8d     %9.1f/s\n", r.points, float64(r.points)/r.elapsed.Seconds())
	line("reads", r.reads, "")
	line("stream", r.stream, "lag from report to delivery")
}

func statusLine(st map[string]int, note string) string {
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, st[k]))
	}
	out := "by status " + strings.Join(parts, " ")
	if len(parts) == 0 {
		out = "none"
	}
	if note != "" {
		out += " (" + note + ")"
	}
	return out
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// inParallel calls fn for each of todo from 16 goroutines at most, and
// returns the first error any call returned (the others still run).
func inParallel(todo []int, fn func(int) error) error {
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range min(16, len(todo)) {
		wg.Go(func() {
			for i := range work {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, i := range todo {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}
