package fleet_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// BenchmarkRuleEditDuringIngest measures what a change of an account's
// alert rules costs the account's own location ingest, on the SQLite store
// (a file): 4 goroutines post 1,000-point batches, one vehicle each, of
// one account back to back (bulk batches: the server takes them one at a
// time), while in every other stretch of 12 batches another goroutine
// edits one of the account's rules after every third batch. A batch
// counts in the stretch it starts in, so batches with and without edits
// are interleaved in one run.
//
// fences=100: the account has 100 geofences (48 positions each) with an
// enter rule each, which makes every batch (1,000 points × 100 fences) too
// heavy to judge in its write transaction: it holds the account's gate
// from before its judgement to its commit, and an edit waits for it.
// fences=0: the batches are judged in their write transaction and hold no
// account gate.
//
// Reported: the batches' p50, p99 and max latency without edits and with
// them (p50-edits-ms...), and the ratio of the p99s; a batch's duration
// (batch-ms: the median interval between two batches' ends in the
// stretches without edits, as they end one at a time); the worst delay the
// edits add, the max latency with edits minus the max without, over a
// batch's duration (worst-delay/batch); what the edits cost the ingest's
// throughput, per edit, in batches (stall-per-edit/batch: how much longer
// the median stretch with edits took than the median one without, which a
// single slow batch does not move), against what an edit costs a batch
// posted alone, the edit's transaction and the rules read and compiled
// again (alone-edit-cost/batch: the floor of any ordering); and the edits'
// own latency. Run with -benchtime 40x or more: an iteration is one pair of
// stretches.
func BenchmarkRuleEditDuringIngest(b *testing.B) {
	for _, fences := range []int{100, 0} {
		b.Run(fmt.Sprintf("fences=%d", fences), func(b *testing.B) { benchRuleEditDuringIngest(b, fences) })
	}
}

func benchRuleEditDuringIngest(b *testing.B, fences int) {
	const (
		workers = 4
		stretch = 12 // batches
		every   = 3  // an edit after every third batch of a stretch with edits
		points  = fleet.MaxPointsPerVehicleBatch
	)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := testclock.New(now)
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Busy", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	must(err)
	p := fleet.SystemPrincipal(a)
	for i := range fences {
		g, err := svc.CreateGeofence(ctx, p, polygon(ringAround(13.05+0.1*float64(i%10), 52.05+0.1*float64(i/10), 0.03, 48)))
		must(err)
		_, err = svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: g.ID}, nil)
		must(err)
	}
	limit := 100.0
	rule, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: &limit}, nil)
	must(err)
	vehicles := make([]fleet.Vehicle, workers)
	next := make([]time.Time, workers) // each vehicle's next timestamp
	for w := range vehicles {
		vehicles[w], err = svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Truck %d", w)})
		must(err)
		next[w] = now.Add(-90 * 24 * time.Hour)
	}
	// Each batch crosses its vehicle's row of fences, west to east.
	batch := func(w int) []fleet.Point {
		pts := make([]fleet.Point, points)
		for k := range pts {
			pts[k] = fleet.Point{Latitude: 52.05 + 0.1*float64(w), Longitude: 13.0 + float64(k)/points, Timestamp: next[w]}
			next[w] = next[w].Add(time.Second)
		}
		return pts
	}
	for w := range vehicles { // the rules compiled, the first alerts opened
		_, err := svc.IngestLocations(ctx, p, vehicles[w].ID, batch(w))
		must(err)
	}

	type done struct {
		stretch int64 // odd: with edits
		took    time.Duration
		end     time.Time
	}
	var (
		mu      sync.Mutex
		batches []done
		edits   []time.Duration
		started atomic.Int64
	)
	total := int64(b.N) * 2 * stretch
	stretchOf := func(n int64) int64 { return (n - 1) / stretch }
	withEdits := func(n int64) bool { return stretchOf(n)%2 == 1 }
	editNow := make(chan struct{}, 1)
	editor := make(chan struct{})
	b.ResetTimer()
	go func() {
		defer close(editor)
		for range editNow {
			if !withEdits(started.Load()) {
				continue
			}
			limit++
			t0 := time.Now()
			_, err := svc.UpdateAlertRule(ctx, p, rule.ID, fleet.AlertRulePatch{ThresholdKmh: fleet.Optional[*float64]{Set: true, Value: &limit}})
			took := time.Since(t0)
			if err != nil {
				b.Error(err)
			}
			mu.Lock()
			edits = append(edits, took)
			mu.Unlock()
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				n := started.Add(1)
				if n > total {
					return
				}
				pts := batch(w)
				t0 := time.Now()
				_, err := svc.IngestLocations(ctx, p, vehicles[w].ID, pts)
				end := time.Now()
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				batches = append(batches, done{stretchOf(n), end.Sub(t0), end})
				mu.Unlock()
				if withEdits(n) && n%every == 0 {
					select {
					case editNow <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	wg.Wait()
	close(editNow)
	<-editor
	b.StopTimer()

	// The floor: what an edit costs one batch posted alone (the edit's
	// transaction, and reading and compiling the rules again), from pairs
	// of batches, the second after an edit.
	var alone, afterEdit []time.Duration
	for range min(b.N, 20) {
		t0 := time.Now()
		_, err := svc.IngestLocations(ctx, p, vehicles[0].ID, batch(0))
		must(err)
		limit++
		t1 := time.Now()
		_, err = svc.UpdateAlertRule(ctx, p, rule.ID, fleet.AlertRulePatch{ThresholdKmh: fleet.Optional[*float64]{Set: true, Value: &limit}})
		must(err)
		_, err = svc.IngestLocations(ctx, p, vehicles[0].ID, batch(0))
		must(err)
		alone, afterEdit = append(alone, t1.Sub(t0)), append(afterEdit, time.Since(t1))
	}

	// Latencies, by the stretch a batch started in; the intervals between
	// two batches' ends in the same stretch; each stretch's span, from its
	// first batch's end to its last's.
	var quiet, busy, gaps []time.Duration
	first, last := map[int64]time.Time{}, map[int64]time.Time{}
	slices.SortFunc(batches, func(x, y done) int { return x.end.Compare(y.end) })
	for i, d := range batches {
		if d.stretch%2 == 1 {
			busy = append(busy, d.took)
		} else {
			quiet = append(quiet, d.took)
			if i > 0 && batches[i-1].stretch == d.stretch {
				gaps = append(gaps, d.end.Sub(batches[i-1].end))
			}
		}
		if _, ok := first[d.stretch]; !ok {
			first[d.stretch] = d.end
		}
		last[d.stretch] = d.end
	}
	var spans, busySpans []time.Duration
	for st, t := range first {
		if st%2 == 1 {
			busySpans = append(busySpans, last[st].Sub(t))
		} else {
			spans = append(spans, last[st].Sub(t))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	per := percentiles(gaps)[0]
	q, e := percentiles(quiet), percentiles(busy)
	b.ReportMetric(ms(q[0]), "p50-ms")
	b.ReportMetric(ms(q[1]), "p99-ms")
	b.ReportMetric(ms(q[2]), "max-ms")
	b.ReportMetric(ms(e[0]), "p50-edits-ms")
	b.ReportMetric(ms(e[1]), "p99-edits-ms")
	b.ReportMetric(ms(e[2]), "max-edits-ms")
	b.ReportMetric(float64(e[1])/float64(q[1]), "p99-ratio")
	b.ReportMetric(ms(per), "batch-ms")
	b.ReportMetric(float64(e[2]-q[2])/float64(per), "worst-delay/batch")
	ed := percentiles(edits)
	b.ReportMetric(ms(ed[0]), "edit-p50-ms")
	b.ReportMetric(ms(ed[2]), "edit-max-ms")
	b.ReportMetric(float64(len(edits))/float64(b.N), "edits/op")
	// What the edits cost the ingest's throughput: how much longer the
	// median stretch with edits took than the median one without, per
	// edit, in batches.
	stall := percentiles(busySpans)[0] - percentiles(spans)[0]
	b.ReportMetric(float64(stall)/(float64(len(edits))/float64(b.N))/float64(per), "stall-per-edit/batch")
	floor := percentiles(afterEdit)[0] - percentiles(alone)[0]
	b.ReportMetric(float64(floor)/float64(percentiles(alone)[0]), "alone-edit-cost/batch")
}

// percentiles returns the p50, p99 and max of ds.
func percentiles(ds []time.Duration) [3]time.Duration {
	if len(ds) == 0 {
		return [3]time.Duration{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)] }
	return [3]time.Duration{at(0.5), at(0.99), s[len(s)-1]}
}

// ringAround is a closed ring of n positions on a circle of radius r
// degrees around lon, lat, counterclockwise.
func ringAround(lon, lat, r float64, n int) [][]float64 {
	ring := make([][]float64, 0, n+1)
	for k := range n {
		a := 2 * math.Pi * float64(k) / float64(n)
		ring = append(ring, []float64{lon + r*math.Cos(a), lat + r*math.Sin(a)})
	}
	return append(ring, ring[0])
}
