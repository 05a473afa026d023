package fleet_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// pointsAccount is an account with vehicles to post points for.
type pointsAccount struct {
	p        fleet.Principal
	vehicles []string
	t0       time.Time // the points' times count from here
}

func newPointsAccount(t *testing.T, svc *fleet.Service, params fleet.AccountParams, vehicles int) *pointsAccount {
	t.Helper()
	a, _, err := svc.Operator().CreateAccount(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	pa := &pointsAccount{p: fleet.SystemPrincipal(a), t0: svc.Now().Add(-48 * time.Hour)}
	for i := range vehicles {
		v, err := svc.CreateVehicle(ctx, pa.p, fleet.Vehicle{Name: "Truck " + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		pa.vehicles = append(pa.vehicles, v.ID)
	}
	return pa
}

// batch is a bulk batch: each of vehicles[from:to] gets perVehicle points,
// at seconds start, start+1... after t0.
func (pa *pointsAccount) batch(from, to, start, perVehicle int) []fleet.Point {
	var pts []fleet.Point
	for _, id := range pa.vehicles[from:to] {
		for j := range perVehicle {
			pts = append(pts, fleet.Point{VehicleID: id, Latitude: 52.5, Longitude: 13.4,
				Timestamp: pa.t0.Add(time.Duration(start+j) * time.Second)})
		}
	}
	return pts
}

// stored counts the points the account's vehicles hold.
func (pa *pointsAccount) stored(t *testing.T, svc *fleet.Service) int {
	t.Helper()
	from, to := pa.t0.Add(-time.Hour), svc.Now()
	n := 0
	for _, id := range pa.vehicles {
		q := fleet.HistoryQuery{From: &from, To: &to, Limit: fleet.MaxHistoryLimit}
		for {
			page, err := svc.ListHistory(ctx, pa.p, id, q)
			if err != nil {
				t.Fatal(err)
			}
			n += len(page.Items)
			if !page.HasMore {
				break
			}
			q.Cursor = page.NextCursor
		}
	}
	return n
}

// TestPointsAllowance: an account stores exactly its plan's points per
// hour. The batch that would pass the allowance is refused whole, 429
// with the time to the window's end, and stores nothing; duplicates, in
// the batch or already stored, take none of it, even when it is spent;
// concurrent batches at its edge get exactly what is left; and the window
// ends an hour after its first point, on the service's clock.
func TestPointsAllowance(t *testing.T) {
	onSharedStores(t, func(t *testing.T, store, _ fleet.Store) { // PostgreSQL counts with the write-set
		is := is.New(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
		acc := newPointsAccount(t, svc, fleet.AccountParams{CompanyName: "Gateway GmbH", Plan: fleet.PlanFree}, 20)
		is.Equal(fleet.PlanFree.Limits().PointsPerHour, 100_000)
		ingest := func(pts []fleet.Point) (fleet.IngestResult, error) { return svc.IngestBulk(ctx, acc.p, pts) }

		first := acc.batch(0, 10, 0, 1_000) // 10,000 points: the window starts now
		res, err := ingest(first)
		is.NoErr(err)
		is.Equal(res, fleet.IngestResult{Accepted: 10_000})
		res, err = ingest(acc.batch(0, 10, 0, 1_000)) // the same points again
		is.NoErr(err)
		is.Equal(res, fleet.IngestResult{Duplicates: 10_000}) // take nothing
		again := acc.batch(0, 10, 500, 999)                   // about half stored, half new
		again = append(again, again[:10]...)                  // and ten repeated in the batch
		res, err = ingest(again)
		is.NoErr(err)
		is.Equal(res, fleet.IngestResult{Accepted: 4_990, Duplicates: 5_010})
		for i := range 8 { // 80,010 more: 95,000 in all
			res, err = ingest(acc.batch(0, 10, 2_000+i*1_000, 1_000))
			is.NoErr(err)
			is.Equal(res.Accepted, 10_000)
		}
		res, err = ingest(acc.batch(0, 10, 1_499, 1))
		is.NoErr(err)
		is.Equal(res.Accepted, 10)

		clock.Advance(10 * time.Minute)
		over := acc.batch(10, 20, 0, 1_000) // 10,000 points of vehicles without any
		_, err = ingest(over)
		is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
		is.Equal(fleet.ErrorMessage(err), "This account has stored 95,000 of the 100,000 location points the free plan allows this hour, "+
			"and this batch's 10,000 would pass that: send at most 5,000 now, or retry after 3000 seconds.")
		is.Equal(err.(*fleet.Error).RetryAfter, 3000*time.Second)
		for _, id := range acc.vehicles[10:20] {
			v, err := svc.Vehicle(ctx, acc.p, id)
			is.NoErr(err)
			is.Equal(v.LastLocation, nil) // refused whole: nothing stored
		}
		is.Equal(acc.stored(t, svc), 95_000)

		// 40 batches of 250 at once, for the 5,000 left: exactly 20 get in.
		var wg sync.WaitGroup
		var mu sync.Mutex
		accepted, refused := 0, 0
		for i := range 40 {
			wg.Go(func() {
				pts := acc.batch(10+i%10, 11+i%10, 2_000+i/10*250, 250)
				res, err := ingest(pts)
				mu.Lock()
				defer mu.Unlock()
				switch fleet.ErrorCode(err) {
				case "":
					accepted += res.Accepted
				case fleet.CodeRateLimitExceeded:
					refused++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		is.Equal(accepted, 5_000)
		is.Equal(refused, 20)
		is.Equal(acc.stored(t, svc), 100_000) // exactly the allowance

		_, err = ingest(acc.batch(19, 20, 9_000, 1))
		is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
		is.Equal(fleet.ErrorMessage(err), "This account has stored 100,000 location points this hour, the most the free plan allows; retry after 3000 seconds.")
		res, err = ingest(first) // a resent buffer is not refused for points it already stored
		is.NoErr(err)
		is.Equal(res, fleet.IngestResult{Duplicates: 10_000})
		mixed := append(acc.batch(0, 1, 0, 999), acc.batch(0, 1, 20_000, 1)...)
		_, err = ingest(mixed) // but one new point is one too many
		is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)

		clock.Advance(50*time.Minute - time.Second)
		_, err = ingest(acc.batch(19, 20, 9_000, 1))
		is.Equal(fleet.ErrorMessage(err), "This account has stored 100,000 location points this hour, the most the free plan allows; retry after 1 seconds.")
		clock.Advance(time.Second) // an hour after the first point: a new window
		res, err = ingest(over)
		is.NoErr(err)
		is.Equal(res.Accepted, 10_000)
		is.Equal(acc.stored(t, svc), 110_000)
	})
}

// TestPointsAllowanceRaisedWithRateLimit: an account's own request limit
// (the operator's --rate-limit) raises its points allowance in proportion.
func TestPointsAllowanceRaisedWithRateLimit(t *testing.T) {
	is := is.New(t)
	is.Equal(fleet.Account{Plan: fleet.PlanFree}.PointsPerHour(), 100_000)
	is.Equal(fleet.Account{Plan: fleet.PlanFree, RateLimitOverride: 1_500}.PointsPerHour(), 150_000)
	is.Equal(fleet.Account{Plan: fleet.PlanPro, RateLimitOverride: 5_000}.PointsPerHour(), 5_000_000) // only raises
	is.Equal(fleet.Account{Plan: fleet.PlanEnterprise, RateLimitOverride: fleet.MaxRateLimit}.PointsPerHour(), 50_000_000_000)

	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	acc := newPointsAccount(t, svc, fleet.AccountParams{CompanyName: "Big Gateway", Plan: fleet.PlanFree, RateLimitPerHour: 1_500}, 15)
	for i := range 15 {
		res, err := svc.IngestBulk(ctx, acc.p, acc.batch(i, i+1, 0, 10_000))
		is.NoErr(err)
		is.Equal(res.Accepted, 10_000) // past the plan's 100,000
	}
	_, err := svc.IngestLocations(ctx, acc.p, acc.vehicles[0], acc.batch(0, 1, 10_000, 1))
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	is.Equal(fleet.ErrorMessage(err), "This account has stored 150,000 location points this hour, the most this account's own limit allows; retry after 3600 seconds.")
}

// TestPointsAllowancePerAccount: one account's spent allowance refuses
// none of another's points.
func TestPointsAllowancePerAccount(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	a := newPointsAccount(t, svc, fleet.AccountParams{CompanyName: "A", Plan: fleet.PlanFree}, 10)
	b := newPointsAccount(t, svc, fleet.AccountParams{CompanyName: "B", Plan: fleet.PlanFree}, 1)
	for i := range 10 {
		_, err := svc.IngestBulk(ctx, a.p, a.batch(i, i+1, 0, 10_000))
		is.NoErr(err)
	}
	_, err := svc.IngestLocations(ctx, a.p, a.vehicles[0], a.batch(0, 1, 10_000, 1))
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded) // a's is spent
	res, err := svc.IngestLocations(ctx, b.p, b.vehicles[0], b.batch(0, 1, 0, 1_000))
	is.NoErr(err)
	is.Equal(res.Accepted, 1_000) // b's is whole
}
