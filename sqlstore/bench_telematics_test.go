package sqlstore_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// The telematics targets (API.md §14), each measured against its baseline
// in the same run: see docs/performance.md.

// teleAttrs are a tracker's 15 typical attributes, as a listener hands
// them over (the service sorts them in place, so each report gets its
// own copy).
func teleAttrs(i int) fleet.Attributes { return slices.Clone(storetest.TypicalAttributes(i)) }

// BenchmarkDeviceReportAttributes measures durable single-record device
// reports carrying 15 typical attributes against the same reports
// without any, on the SQLite store in a file, round by round in one run
// (as BenchmarkDeviceReportVsIngest does): ratio = reports/s with
// attributes over reports/s without (target >= 0.9).
func BenchmarkDeviceReportAttributes(b *testing.B) {
	const goroutines, reportsPerRound = 16, 4
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	store := MustOpenSQLite(b)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	bare, rich := make([]string, goroutines), make([]string, goroutines)
	for i := range goroutines {
		for j, ids := range [][]string{bare, rich} {
			v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("V %d/%d", j, i)})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = fmt.Sprintf("35630%d%08d", j, i)
			if _, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: ids[i], VehicleID: v.ID}); err != nil {
				b.Fatal(err)
			}
		}
	}
	t0 := clock.Now()
	seq := make([]int, goroutines)
	speed := 42.0
	report := func(ids []string, attrs bool) func(g int) error {
		return func(g int) error {
			seq[g]++
			pos := fleet.DevicePosition{Latitude: 52.5, Longitude: 13.4 + float64(seq[g])/1e5, Timestamp: t0.Add(time.Duration(seq[g]) * 100 * time.Millisecond),
				Speed: &speed, Valid: true}
			if attrs {
				pos.Attrs = teleAttrs(seq[g])
			}
			r, err := svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: ids[g], Protocol: "teltonika", RemoteAddr: "192.0.2.7:5027",
				Positions: []fleet.DevicePosition{pos}})
			if err == nil && !r.Stored {
				err = fmt.Errorf("report not stored: %s", r.Reason)
			}
			return err
		}
	}
	pairedRounds(b, goroutines, reportsPerRound, func() { clock.Set(t0.Add(time.Duration(slices.Max(seq)) * 100 * time.Millisecond)) },
		report(bare, false), report(rich, true), "bare-reports/s", "attribute-reports/s")
}

// pairedRounds runs rounds of base and other (each goroutine doing
// perRound operations of one kind, then of the other, the order
// alternating) for b's loop, after a round of each to warm up, calling
// before ahead of each round. It reports each side's operations per
// second, ratio = other's rate over base's, and the median of that ratio
// over the pairs of rounds (a round that waited for the disk far longer
// than the rest moves the totals, not the median).
func pairedRounds(b *testing.B, goroutines, perRound int, before func(), base, other func(g int) error, baseUnit, otherUnit string) {
	round := func(op func(g int) error) time.Duration {
		before()
		var wg sync.WaitGroup
		start := time.Now()
		for g := range goroutines {
			wg.Go(func() {
				for range perRound {
					if err := op(g); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	round(base)
	round(other)
	var tBase, tOther time.Duration
	var ratios []float64
	n := 0
	for b.Loop() {
		var x, y time.Duration
		if n%2 == 0 {
			x = round(base)
			y = round(other)
		} else {
			y = round(other)
			x = round(base)
		}
		tBase, tOther = tBase+x, tOther+y
		ratios = append(ratios, x.Seconds()/y.Seconds())
		n++
	}
	ops := float64(n * goroutines * perRound)
	b.ReportMetric(ops/tBase.Seconds(), baseUnit)
	b.ReportMetric(ops/tOther.Seconds(), otherUnit)
	b.ReportMetric(tBase.Seconds()/tOther.Seconds(), "ratio")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
}

// BenchmarkHistoryPageAttributes measures a page of 1,000 points of a
// vehicle's history whose points carry 15 typical attributes against the
// same page without attributes, on SQLite, alternating in one run, read
// and written as JSON two ways:
//
//   - as the API serves a page (fleet.Service.HistoryJSON: attributes
//     from their stored form straight to JSON): ratio and median-ratio,
//     time with attributes over time without (target <= 2);
//   - as a Go caller reads one (Service.ListHistory: attributes decoded
//     into fleet.Attributes) and then writes it (Point.AppendJSON):
//     go-ratio and go-median-ratio.
func BenchmarkHistoryPageAttributes(b *testing.B) {
	const n = 1_000
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	store := MustOpenSQLite(b)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	from := clock.Now().Add(-2 * time.Hour)
	vehicle := func(attrs bool) string {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprint("attrs ", attrs)})
		if err != nil {
			b.Fatal(err)
		}
		pts := make([]fleet.Point, n)
		for i := range pts {
			speed, heading := 42.5, 180.0
			pts[i] = fleet.Point{Latitude: 52.5 + float64(i)/1e4, Longitude: 13.4, Timestamp: from.Add(time.Duration(i) * time.Second), Speed: &speed, Heading: &heading}
			if attrs {
				pts[i].Attributes = teleAttrs(i)
			}
		}
		if _, err := svc.IngestLocations(ctx, p, v.ID, pts); err != nil {
			b.Fatal(err)
		}
		return v.ID
	}
	bare, rich := vehicle(false), vehicle(true)
	q := fleet.HistoryQuery{From: &from, Limit: n}
	var buf []byte
	api := func(id string) time.Duration {
		start := time.Now()
		h, err := svc.HistoryJSON(ctx, p, id, q, buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		buf = h.Data
		return time.Since(start)
	}
	goPage := func(id string) time.Duration {
		start := time.Now()
		l, err := svc.ListHistory(ctx, p, id, q)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Items) != n {
			b.Fatalf("%d points, want %d", len(l.Items), n)
		}
		buf = buf[:0]
		for i := range l.Items {
			buf = l.Items[i].AppendJSON(append(buf, ','))
		}
		return time.Since(start)
	}
	type side struct {
		page       func(string) time.Duration
		bare, rich time.Duration
		ratios     []float64 // of each pair of pages
	}
	sides := []*side{{page: api}, {page: goPage}}
	for _, sd := range sides {
		sd.page(bare)
		sd.page(rich)
	}
	if h, _ := svc.HistoryJSON(ctx, p, rich, q, nil); !bytes.Contains(h.Data, []byte(`"attributes":{"battery_level":97,`)) {
		b.Fatalf("the page has no attributes: %.200s", h.Data)
	}
	k := 0
	for b.Loop() {
		for _, sd := range sides {
			var x, y time.Duration
			if k%2 == 0 {
				x = sd.page(bare)
				y = sd.page(rich)
			} else {
				y = sd.page(rich)
				x = sd.page(bare)
			}
			sd.bare, sd.rich = sd.bare+x, sd.rich+y
			sd.ratios = append(sd.ratios, y.Seconds()/x.Seconds())
		}
		k++
	}
	for i, sd := range sides {
		prefix := []string{"", "go-"}[i]
		b.ReportMetric(float64(sd.bare.Microseconds())/float64(k), prefix+"bare-µs/page")
		b.ReportMetric(float64(sd.rich.Microseconds())/float64(k), prefix+"attribute-µs/page")
		b.ReportMetric(sd.rich.Seconds()/sd.bare.Seconds(), prefix+"ratio")
		slices.Sort(sd.ratios)
		b.ReportMetric(sd.ratios[len(sd.ratios)/2], prefix+"median-ratio")
	}
}

// BenchmarkStoredBytesPerPoint measures what a point takes in the SQLite
// file (its row and its keys, from the file's size) with 15 typical
// attributes and without: ratio = bytes with over bytes without (target
// <= 3). Each side is a file of its own holding 20,000 points of one
// vehicle, written as a device's reports would be, in batches.
func BenchmarkStoredBytesPerPoint(b *testing.B) {
	const n, batch = 20_000, 500
	size := func(attrs bool) float64 {
		path := filepath.Join(b.TempDir(), "fleet.db")
		s, err := sqlstore.Open(ctx, "sqlite:"+path)
		if err != nil {
			b.Fatal(err)
		}
		a := storetest.MustAccount(b, s)
		v := storetest.MustVehicle(b, s, a.ID, "v")
		fileSize := func() int64 {
			if err := s.Close(); err != nil { // checkpoints the WAL into the file
				b.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			if s, err = sqlstore.Open(ctx, "sqlite:"+path); err != nil {
				b.Fatal(err)
			}
			return fi.Size()
		}
		base := fileSize()
		t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		for start := 0; start < n; start += batch {
			pts := make([]fleet.Point, batch)
			for i := range pts {
				k := start + i
				speed, heading, odo := 42.5, 180.25, 1000+float64(k)/10
				pts[i] = fleet.Point{Latitude: 52.5 + float64(k)/1e5, Longitude: 13.4, Timestamp: t0.Add(time.Duration(k) * time.Second),
					Speed: &speed, Heading: &heading, OdometerKm: &odo}
				if attrs {
					pts[i].Attributes = storetest.TypicalAttributes(k)
				}
			}
			if err := s.Update(ctx, func(tx fleet.Tx) error { _, err := tx.InsertPoints(v.ID, pts); return err }); err != nil {
				b.Fatal(err)
			}
		}
		grown := fileSize()
		s.Close()
		return float64(grown-base) / n
	}
	var bare, rich float64
	for b.Loop() {
		bare, rich = size(false), size(true)
	}
	b.ReportMetric(bare, "bare-bytes/point")
	b.ReportMetric(rich, "attribute-bytes/point")
	b.ReportMetric(rich/bare, "ratio")
}
