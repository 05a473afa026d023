package sqlstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// The heavy tenant of BenchmarkOtherTenantWrites: geofences of rings of
// 1,000 positions each (combs, see zigzag), all over one 0.1-degree square,
// each watched by an enter rule. The defaults are the enterprise plan's caps at their worst:
// 1,000 geofences of 10 rings of 1,000 positions (10,000,000 positions),
// 1,000 rules. FLEET_BENCH_GEOFENCES and FLEET_BENCH_RINGS set fewer.
func heavyTenantSize() (geofences, rings int) {
	geofences, rings = fleet.PlanEnterprise.Limits().Geofences, fleet.MaxGeofenceVertices/fleet.MaxRingVertices
	if n, err := strconv.Atoi(os.Getenv("FLEET_BENCH_GEOFENCES")); err == nil && n > 0 {
		geofences = n
	}
	if n, err := strconv.Atoi(os.Getenv("FLEET_BENCH_RINGS")); err == nil && n > 0 {
		rings = n
	}
	return geofences, rings
}

// zigzag is a closed ring of at most n positions over the square
// lon0..lon0+0.1, lat0..lat0+0.1: a comb on a thin base whose teeth, fill of
// the width between them, run north-south (turned, east-west), every tooth
// edge spanning most of the square.
func zigzag(lon0, lat0 float64, n int, turned bool, fill float64) [][]float64 {
	teeth := (n - 3) / 4
	spacing := 0.1 / float64(teeth)
	ring := make([][]float64, 0, n)
	for i := range teeth {
		x0 := spacing * float64(i)
		x1 := x0 + fill*spacing
		ring = append(ring, []float64{x0, 0.005}, []float64{x0, 0.1}, []float64{x1, 0.1}, []float64{x1, 0.005})
	}
	ring = append(ring, []float64{0.1, 0}, []float64{0, 0})
	for _, p := range ring {
		if turned {
			p[0], p[1] = p[1], p[0]
		}
		p[0], p[1] = lon0+p[0], lat0+p[1]
	}
	return append(ring, ring[0])
}

// BenchmarkOtherTenantWrites measures the latency of another account's
// writes — one location report of one vehicle, a new vehicle — on the
// SQLite store (a file) while a heavy tenant at its plan's caps sends its
// heaviest legal batches back to back, against the same writes with the
// heavy tenant idle, alternating every 50 writes in the same run. The
// heavy tenant (see heavyTenantSize) sends bulk batches of 10,000 points,
// 100 vehicles x 100, zig-zagging in and out of the square where all its
// geofences are: every point is judged against every geofence. Its first
// batch, which compiles the rules and opens an enter alert of every rule
// for every vehicle (100,000 alerts and their events in one transaction),
// is made before the measurement and reported apart.
func BenchmarkOtherTenantWrites(b *testing.B) {
	geofences, rings := heavyTenantSize()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	store := MustOpen(b, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	newAccount := func(name string) fleet.Principal {
		a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: name, Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
		if err != nil {
			b.Fatal(err)
		}
		return fleet.SystemPrincipal(a)
	}
	heavy, other := newAccount("Heavy"), newAccount("Other")
	const lon0, lat0 = 13.0, 52.0
	for start := 0; start < geofences; start += 20 {
		err := store.Update(ctx, func(tx fleet.Tx) error {
			for range min(20, geofences-start) {
				g := fleet.Geofence{ID: fleet.NewID(fleet.PrefixGeofence), AccountID: heavy.Account.ID, Name: "Zone",
					Geometry: fleet.Geometry{Type: fleet.GeometryPolygon}, CreatedAt: clock.Now(), UpdatedAt: clock.Now()}
				// An outer comb of wide teeth, holes of thin ones: a point
				// is mostly inside the outer ring and outside every hole,
				// so every ring is tested.
				g.Geometry.Rings = append(g.Geometry.Rings, zigzag(lon0, lat0, fleet.MaxRingVertices, false, 0.9))
				for r := 1; r < rings; r++ {
					g.Geometry.Rings = append(g.Geometry.Rings, zigzag(lon0, lat0, fleet.MaxRingVertices, r%2 == 1, 0.05))
				}
				if err := tx.CreateGeofence(g); err != nil {
					return err
				}
				if err := tx.CreateAlertRule(fleet.AlertRule{ID: fleet.NewID(fleet.PrefixRule), AccountID: heavy.Account.ID,
					Type: fleet.AlertGeofenceEnter, Severity: fleet.SeverityWarning, GeofenceID: g.ID, VehicleIDs: []string{},
					Enabled: true, CreatedAt: clock.Now(), UpdatedAt: clock.Now()}); err != nil {
					return err
				}
			}
			return tx.BumpAlertConfig(heavy.Account.ID)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	vehicles := make([]string, 100)
	for i := range vehicles {
		v, err := svc.CreateVehicle(ctx, heavy, fleet.Vehicle{Name: "H" + strconv.Itoa(i)})
		if err != nil {
			b.Fatal(err)
		}
		vehicles[i] = v.ID
	}
	mine, err := svc.CreateVehicle(ctx, other, fleet.Vehicle{Name: "Mine"})
	if err != nil {
		b.Fatal(err)
	}
	t0 := clock.Now().Add(-24 * time.Hour)
	round := 0
	heavyBatch := func() []fleet.Point {
		pts := make([]fleet.Point, 0, 10_000)
		for j := range 100 {
			ts := t0.Add(time.Duration(round*100+j) * time.Second)
			for i, id := range vehicles {
				// In and out of the square, through the teeth.
				lon := lon0 - 0.01 + 0.12*float64((i*37+j*11)%100)/100
				lat := lat0 + 0.003 + 0.094*float64((i*53+j*29)%100)/100
				pts = append(pts, fleet.Point{VehicleID: id, Latitude: lat, Longitude: lon, Timestamp: ts})
			}
		}
		round++
		return pts
	}
	t := time.Now()
	if _, err := svc.IngestBulk(ctx, heavy, heavyBatch()); err != nil {
		b.Fatal(err)
	}
	first := time.Since(t)
	opened := 0
	err = store.View(ctx, func(tx fleet.Tx) error {
		for after := ""; ; {
			as, err := tx.Alerts(heavy.Account.ID, fleet.AlertFilter{}, fleet.Page{After: after, Limit: 10_000})
			if err != nil || len(as) == 0 {
				return err
			}
			opened += len(as)
			after = as[len(as)-1].ID
		}
	})
	if err != nil {
		b.Fatal(err)
	}

	// The heavy tenant sends batches back to back while on; turned off,
	// it finishes the batch it is sending.
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	on, busy, stopped := false, false, false
	var batchTimes []time.Duration
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			mu.Lock()
			for !on && !stopped {
				cond.Wait()
			}
			if stopped {
				mu.Unlock()
				return
			}
			busy = true
			mu.Unlock()
			t := time.Now()
			_, err := svc.IngestBulk(ctx, heavy, heavyBatch())
			mu.Lock()
			batchTimes = append(batchTimes, time.Since(t))
			busy = false
			if err != nil {
				b.Error(err)
				stopped = true
			}
			cond.Broadcast()
			mu.Unlock()
		}
	})
	set := func(v bool) {
		mu.Lock()
		on = v
		cond.Broadcast()
		for !on && busy {
			cond.Wait()
		}
		mu.Unlock()
	}
	n := 0
	write := func() time.Duration {
		n++
		t := time.Now()
		var err error
		if n%2 == 0 {
			_, err = svc.CreateVehicle(ctx, other, fleet.Vehicle{Name: "Van"})
		} else {
			_, err = svc.IngestLocations(ctx, other, mine.ID, []fleet.Point{{Latitude: 48.1, Longitude: 11.5, Timestamp: t0.Add(time.Duration(n) * time.Millisecond)}})
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t)
	}
	// Each round: 200 writes with the heavy tenant idle, then writes for as
	// long as it takes the heavy tenant to send one whole batch.
	var idle, loaded []time.Duration
	for b.Loop() {
		for range 200 {
			idle = append(idle, write())
		}
		mu.Lock()
		done := len(batchTimes)
		mu.Unlock()
		set(true)
		for {
			loaded = append(loaded, write())
			mu.Lock()
			sent := len(batchTimes) > done
			mu.Unlock()
			if sent {
				break
			}
		}
		set(false)
	}
	mu.Lock()
	stopped = true
	cond.Broadcast()
	mu.Unlock()
	wg.Wait()
	pct := func(ds []time.Duration, p float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(loaded, 0.5), "loaded-p50-ms")
	b.ReportMetric(pct(loaded, 0.99), "loaded-p99-ms")
	b.ReportMetric(pct(loaded, 1), "loaded-max-ms")
	b.ReportMetric(pct(idle, 0.5), "idle-p50-ms")
	b.ReportMetric(pct(idle, 0.99), "idle-p99-ms")
	b.ReportMetric(pct(batchTimes, 0.5)/1000, "heavy-s/batch")
	b.ReportMetric(first.Seconds(), "first-batch-s")
	b.Logf("%d geofences of %d rings of %d positions; first batch opened %d alerts; %d writes idle, %d loaded over %d heavy batches",
		geofences, rings, fleet.MaxRingVertices, opened, len(idle), len(loaded), len(batchTimes))
}

// BenchmarkOtherTenantWritesVolume measures the latency of another
// account's one-point reports while one account bulk-loads: batches of
// 10,000 points (100 vehicles x 100) posted back to back from several
// connections at once (FLEET_BENCH_UPLOADERS, default 4), each for vehicles
// of its own, so that nothing but the service and the store order them.
// The same reports are measured in three modes, in turn in the same run,
// on the same store and load:
//
//   - fair: as the code is: the account's bulk batches one at a time on the
//     server (fleet's bulk gate), and the store's turns between accounts;
//   - turns: the store's turns alone, each uploader through a fleet.Service
//     of its own (as if on a server of its own), so that no gate orders
//     them;
//   - unfair: neither, the code before both: a Service each, turns off.
//
// Each stretch lasts volumeBlock reports and at least as long as the heavy
// account takes to store as many batches as it has uploaders; its first
// volumeSettle reports, while the queues drain into the new order, are not
// counted. It reports each mode's p50 and p99, fair's p99 against
// unfair's, the heavy account's points a second in each mode (batches run
// whole within one stretch; the other account's reports, sent one after
// another, are many more in a mode where each is fast) and its batches
// refused unavailable. On SQLite (a file) and, when FLEET_TEST_POSTGRES is
// set, PostgreSQL.
func BenchmarkOtherTenantWritesVolume(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchmarkVolume(b, MustOpen(b, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db")))
	})
	b.Run("postgres", func(b *testing.B) {
		benchmarkVolume(b, MustOpen(b, pgtest.NewSchema(b, pgtest.DSN(b))))
	})
}

// volumeBlock is how many reports each mode gets in turn, and volumeSettle
// how many of them, after each switch, are not counted.
const volumeBlock, volumeSettle = 30, 5

// The modes of BenchmarkOtherTenantWritesVolume.
const (
	volumeFair = iota
	volumeTurns
	volumeUnfair
	volumeModes
)

var volumeModeNames = [volumeModes]string{"fair", "turns", "unfair"}

func benchmarkVolume(b *testing.B, store *sqlstore.Store) {
	uploaders := 4
	if n, err := strconv.Atoi(os.Getenv("FLEET_BENCH_UPLOADERS")); err == nil && n > 0 {
		uploaders = n
	}
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	own := make([]*fleet.Service, uploaders) // a Service of each uploader's own
	for u := range own {
		own[u] = fleet.NewService(store, fleet.Options{Now: clock.Now})
	}
	newAccount := func(name string) fleet.Principal {
		// The largest allowance there is: nothing here is refused for it.
		a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: name, Plan: fleet.PlanEnterprise, RateLimitPerHour: fleet.MaxRateLimit})
		if err != nil {
			b.Fatal(err)
		}
		return fleet.SystemPrincipal(a)
	}
	heavy, other := newAccount("Heavy"), newAccount("Other")
	fleets := make([][]string, uploaders)
	for u := range fleets {
		for i := range 100 {
			v, err := svc.CreateVehicle(ctx, heavy, fleet.Vehicle{Name: fmt.Sprintf("U%d-%d", u, i)})
			if err != nil {
				b.Fatal(err)
			}
			fleets[u] = append(fleets[u], v.ID)
		}
	}
	mine, err := svc.CreateVehicle(ctx, other, fleet.Vehicle{Name: "Mine"})
	if err != nil {
		b.Fatal(err)
	}
	t0 := clock.Now().Add(-48 * time.Hour)
	speed := 40.0
	// stretch counts the switches; the mode is stretch % volumeModes. A
	// batch counts for a mode only if it ran whole in one stretch.
	var stretch atomic.Int64
	var points [volumeModes]atomic.Int64 // accepted by the heavy account
	var failed [volumeModes]atomic.Int64 // refused unavailable (PostgreSQL's serialisation failures past the retries)
	var batches atomic.Int64             // stored by the heavy account
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for u, vehicles := range fleets {
		wg.Go(func() {
			pts := make([]fleet.Point, 0, 10_000)
			for round := 0; ; round++ {
				select {
				case <-stop:
					return
				default:
				}
				pts = pts[:0]
				for j := range 100 {
					ts := t0.Add(time.Duration(round*100+j) * time.Second)
					for i, id := range vehicles {
						pts = append(pts, fleet.Point{VehicleID: id, Latitude: 52 + float64(round*100+j)*1e-4, Longitude: 13 + float64(i)*1e-3, Speed: &speed, Timestamp: ts})
					}
				}
				st := stretch.Load()
				m := st % volumeModes
				through := svc
				if m != volumeFair {
					through = own[u]
				}
				res, err := through.IngestBulk(ctx, heavy, pts)
				if fleet.ErrorCode(err) == fleet.CodeUnavailable {
					failed[m].Add(1)
					continue
				}
				if err != nil {
					b.Errorf("uploader %d: %v", u, err)
					return
				}
				batches.Add(1)
				if st == stretch.Load() {
					points[m].Add(int64(res.Accepted))
				}
			}
		})
	}
	var lat [volumeModes][]time.Duration
	var spent [volumeModes]time.Duration
	n := 0
	report := func() time.Duration {
		n++
		t := time.Now()
		_, err := svc.IngestLocations(ctx, other, mine.ID, []fleet.Point{{Latitude: 48.1, Longitude: 11.5, Timestamp: t0.Add(time.Duration(n) * time.Millisecond)}})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t)
	}
	// The load first: every uploader has stored a batch.
	for batches.Load() < int64(uploaders) {
		report()
	}
	for b.Loop() {
		for m := range volumeModes {
			sqlstore.SetFairWrites(store, m != volumeUnfair)
			stretch.Add(1)
			for stretch.Load()%volumeModes != int64(m) {
				stretch.Add(1)
			}
			start, before := time.Now(), batches.Load()
			// At least volumeBlock reports, and as many as it takes the
			// heavy account to store as many batches as it has uploaders:
			// every stretch is under load, and holds batches of its own.
			for i := 0; i < volumeBlock || batches.Load() < before+int64(uploaders); i++ {
				d := report()
				if i >= volumeSettle {
					lat[m] = append(lat[m], d)
				}
			}
			spent[m] += time.Since(start)
		}
	}
	close(stop)
	wg.Wait()
	sqlstore.SetFairWrites(store, true)
	pct := func(ds []time.Duration, p float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	for m, name := range volumeModeNames {
		b.ReportMetric(pct(lat[m], 0.5), name+"-p50-ms")
		b.ReportMetric(pct(lat[m], 0.99), name+"-p99-ms")
		b.ReportMetric(float64(points[m].Load())/spent[m].Seconds(), name+"-heavy-points/s")
		b.ReportMetric(float64(failed[m].Load()), name+"-heavy-503s")
	}
	b.ReportMetric(pct(lat[volumeFair], 0.99)/pct(lat[volumeUnfair], 0.99), "p99-fair/unfair")
	b.Logf("%s: %d uploaders; %d reports counted in each mode; heavy points fair %d, turns %d, unfair %d",
		store.Dialect(), uploaders, len(lat[volumeFair]), points[volumeFair].Load(), points[volumeTurns].Load(), points[volumeUnfair].Load())
}
