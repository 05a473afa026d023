package fleet_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// sharer is an account with two vehicles, on a service whose clock the
// test moves.
type sharer struct {
	t      *testing.T
	svc    *fleet.Service
	clock  *testclock.Clock
	p      fleet.Principal
	v, v2  fleet.Vehicle
	other  fleet.Principal // another account
	otherV fleet.Vehicle
}

// shareT0 is a Tuesday, 10:00 UTC.
var shareT0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func newSharer(t *testing.T, store fleet.Store) *sharer {
	t.Helper()
	clock := testclock.New(shareT0)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	return newSharerOn(t, svc, clock)
}

func newSharerOn(t *testing.T, svc *fleet.Service, clock *testclock.Clock) *sharer {
	t.Helper()
	is := is.New(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Deliveries", Plan: fleet.PlanPro})
	is.NoErr(err)
	b, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Other Co", Plan: fleet.PlanPro})
	is.NoErr(err)
	s := &sharer{t: t, svc: svc, clock: clock, p: fleet.SystemPrincipal(a), other: fleet.SystemPrincipal(b)}
	s.v, err = svc.CreateVehicle(ctx, s.p, fleet.Vehicle{Name: "Van 3"})
	is.NoErr(err)
	s.v2, err = svc.CreateVehicle(ctx, s.p, fleet.Vehicle{Name: "Truck 9"})
	is.NoErr(err)
	s.otherV, err = svc.CreateVehicle(ctx, s.other, fleet.Vehicle{Name: "Not yours"})
	is.NoErr(err)
	return s
}

func (s *sharer) link(ttl time.Duration) fleet.NewShareLink {
	s.t.Helper()
	exp := s.clock.Now().Add(ttl)
	nl, err := s.svc.CreateShareLink(ctx, s.p, fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: &exp})
	if err != nil {
		s.t.Fatalf("create share link: %v", err)
	}
	return nl
}

// at reports one point of the vehicle v at t.
func (s *sharer) at(p fleet.Principal, vehicleID string, t time.Time, lat, lon float64) {
	s.t.Helper()
	if _, err := s.svc.IngestLocations(ctx, p, vehicleID, []fleet.Point{{Latitude: lat, Longitude: lon, Timestamp: t}}); err != nil {
		s.t.Fatalf("ingest: %v", err)
	}
}

func (s *sharer) count() int {
	s.t.Helper()
	l, err := s.svc.ListShareLinks(ctx, s.p, fleet.ShareLinkFilter{}, fleet.ListQuery{Limit: fleet.MaxPageLimit})
	if err != nil {
		s.t.Fatal(err)
	}
	return len(l.Items)
}

func TestShareLinkCreate(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	nl := s.link(8 * time.Hour)
	is.Equal(len(nl.Token), fleet.ShareTokenLen)
	is.True(strings.HasPrefix(nl.Link.ID, fleet.PrefixShareLink+"_"))
	is.Equal(nl.Link.VehicleID, s.v.ID)
	is.True(nl.Link.CreatedAt.Equal(shareT0))
	is.True(nl.Link.ExpiresAt.Equal(shareT0.Add(8 * time.Hour)))
	is.Equal(nl.Link.Hash, fleet.HashShareToken(nl.Token)) // the token's hash is what is kept
	again := s.link(8 * time.Hour)
	is.True(again.Token != nl.Token) // random
	got, err := s.svc.ShareLink(ctx, s.p, nl.Link.ID)
	is.NoErr(err)
	is.Equal(got, nl.Link)
	is.Equal(got.Status(shareT0), fleet.ShareLinkActive)
	_, err = s.svc.ShareLink(ctx, s.other, nl.Link.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // another account's link

	week := shareT0.Add(fleet.MaxShareLinkTTL)
	_, err = s.svc.CreateShareLink(ctx, s.p, fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: &week})
	is.NoErr(err) // exactly 7 days ahead

	before := s.count()
	ptr := func(t time.Time) *time.Time { return &t }
	for _, tc := range []struct {
		name   string
		in     fleet.ShareLinkInput
		code   string
		fields []string
	}{
		{"no expiry", fleet.ShareLinkInput{VehicleID: s.v.ID}, fleet.CodeValidation, []string{"expires_at"}},
		{"past", fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: ptr(shareT0.Add(-time.Second))}, fleet.CodeValidation, []string{"expires_at"}},
		{"now", fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: ptr(shareT0)}, fleet.CodeValidation, []string{"expires_at"}},
		{"over 7 days", fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: ptr(week.Add(time.Microsecond))}, fleet.CodeValidation, []string{"expires_at"}},
		{"no vehicle", fleet.ShareLinkInput{ExpiresAt: ptr(shareT0.Add(time.Hour))}, fleet.CodeValidation, []string{"vehicle_id"}},
		{"both", fleet.ShareLinkInput{}, fleet.CodeValidation, []string{"expires_at", "vehicle_id"}},
		{"another account's vehicle", fleet.ShareLinkInput{VehicleID: s.otherV.ID, ExpiresAt: ptr(shareT0.Add(time.Hour))}, fleet.CodeNotFound, nil},
		{"not a vehicle id", fleet.ShareLinkInput{VehicleID: "veh_nope", ExpiresAt: ptr(shareT0.Add(time.Hour))}, fleet.CodeNotFound, nil},
	} {
		_, err := s.svc.CreateShareLink(ctx, s.p, tc.in)
		is.Equal(fleet.ErrorCode(err), tc.code) // tc.name
		is.Equal(fieldsOf(err), tc.fields)      // tc.name
	}
	viewer := s.p
	viewer.Key.Permissions = fleet.RoleViewer.Permissions()
	_, err = s.svc.CreateShareLink(ctx, viewer, fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: ptr(shareT0.Add(time.Hour))})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions) // vehicles:write
	_, err = s.svc.RevokeShareLink(ctx, viewer, nl.Link.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, err = s.svc.ListShareLinks(ctx, viewer, fleet.ShareLinkFilter{}, fleet.ListQuery{})
	is.NoErr(err)               // vehicles:read lists
	is.Equal(s.count(), before) // nothing made by a refused request
}

func TestShareLinkListAndRevoke(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	short, long := s.link(time.Hour), s.link(8*time.Hour)
	exp := shareT0.Add(time.Hour)
	other, err := s.svc.CreateShareLink(ctx, s.p, fleet.ShareLinkInput{VehicleID: s.v2.ID, ExpiresAt: &exp})
	is.NoErr(err)

	revoked, err := s.svc.RevokeShareLink(ctx, s.p, long.Link.ID)
	is.NoErr(err)
	is.True(revoked.RevokedAt != nil && revoked.RevokedAt.Equal(shareT0))
	s.clock.Advance(time.Minute)
	again, err := s.svc.RevokeShareLink(ctx, s.p, long.Link.ID)
	is.NoErr(err)
	is.True(again.RevokedAt.Equal(shareT0)) // revoking again changes nothing
	_, err = s.svc.RevokeShareLink(ctx, s.other, short.Link.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // another account's

	s.clock.Advance(time.Hour) // short expires
	list := func(f fleet.ShareLinkFilter) []string {
		l, err := s.svc.ListShareLinks(ctx, s.p, f, fleet.ListQuery{})
		is.NoErr(err)
		var ids []string
		for _, sl := range l.Items {
			ids = append(ids, sl.ID)
		}
		return ids
	}
	is.Equal(list(fleet.ShareLinkFilter{}), []string{short.Link.ID, long.Link.ID, other.Link.ID})
	is.Equal(list(fleet.ShareLinkFilter{VehicleID: s.v.ID}), []string{short.Link.ID, long.Link.ID})
	is.Equal(list(fleet.ShareLinkFilter{Status: fleet.ShareLinkExpired}), []string{short.Link.ID, other.Link.ID})
	is.Equal(list(fleet.ShareLinkFilter{Status: fleet.ShareLinkRevoked}), []string{long.Link.ID})
	is.Equal(len(list(fleet.ShareLinkFilter{Status: fleet.ShareLinkActive})), 0)
	_, err = s.svc.ListShareLinks(ctx, s.p, fleet.ShareLinkFilter{Status: "gone"}, fleet.ListQuery{})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
	_, err = s.svc.ListShareLinks(ctx, s.p, fleet.ShareLinkFilter{VehicleID: "truck"}, fleet.ListQuery{})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
	l, err := s.svc.ListShareLinks(ctx, s.other, fleet.ShareLinkFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 0) // another account sees none

	// Kept ShareLinkRetention after they expired, then purged.
	s.clock.Set(short.Link.ExpiresAt.Add(fleet.ShareLinkRetention))
	is.NoErr(s.svc.Jobs().Maintain(ctx))
	is.Equal(s.count(), 3)
	s.clock.Advance(time.Microsecond)
	is.NoErr(s.svc.Jobs().Maintain(ctx))
	is.Equal(list(fleet.ShareLinkFilter{}), []string{long.Link.ID})
}

func TestShareLinkCap(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	var first fleet.NewShareLink
	for i := range fleet.MaxActiveShareLinks {
		nl := s.link(time.Hour)
		if i == 0 {
			first = nl
		}
	}
	exp := shareT0.Add(time.Hour)
	_, err := s.svc.CreateShareLink(ctx, s.p, fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: &exp})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // the vehicle's cap
	_, err = s.svc.CreateShareLink(ctx, s.p, fleet.ShareLinkInput{VehicleID: s.v2.ID, ExpiresAt: &exp})
	is.NoErr(err) // another vehicle's links are its own
	_, err = s.svc.RevokeShareLink(ctx, s.p, first.Link.ID)
	is.NoErr(err)
	s.link(time.Hour) // a revoked link frees its place
}

func TestSharedVehicleShowsTodaysRouteOnly(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	s.clock.Set(day.Add(-26 * time.Hour)) // Sunday 22:00
	s.at(s.p, s.v.ID, s.clock.Now().Add(-time.Minute), 50.0, 8.0)
	nl := s.link(7 * 24 * time.Hour) // made Sunday evening
	s.clock.Set(day.Add(-2 * time.Hour))
	s.at(s.p, s.v.ID, day.Add(-3*time.Hour), 50.1, 8.1) // Monday 21:00
	s.clock.Set(day.Add(11 * time.Hour))
	s.at(s.p, s.v.ID, day.Add(30*time.Minute), 50.2, 8.2) // Tuesday 00:30
	s.at(s.p, s.v.ID, day.Add(9*time.Hour), 50.3, 8.3)    // Tuesday 09:00
	s.at(s.p, s.v2.ID, day.Add(9*time.Hour), 1, 1)        // another vehicle of the account
	s.at(s.other, s.otherV.ID, day.Add(9*time.Hour), 2, 2)

	sv, err := s.svc.Edge().SharedVehicle(ctx, nl.Token, time.UTC)
	is.NoErr(err)
	is.Equal(sv.CompanyName, "Acme Deliveries")
	is.Equal(sv.VehicleName, "Van 3")
	is.True(sv.ExpiresAt.Equal(nl.Link.ExpiresAt))
	is.True(sv.RouteFrom.Equal(day)) // the start of the viewer's day: later than the link's creation
	is.Equal(len(sv.Route), 2)       // Tuesday's points only
	is.Equal(sv.Route[0].Latitude, 50.2)
	is.Equal(sv.Route[1].Latitude, 50.3)
	is.True(!sv.RouteCut)
	is.True(sv.Position != nil)
	is.Equal(sv.Position.Location.Latitude, 50.3) // the latest report
	is.Equal(sv.Position.VehicleID, s.v.ID)

	// In a time zone 4 hours ahead, the day began at Monday 20:00 UTC.
	ahead := time.FixedZone("UTC+4", 4*3600)
	sv, err = s.svc.Edge().SharedVehicle(ctx, nl.Token, ahead)
	is.NoErr(err)
	is.True(sv.RouteFrom.Equal(day.Add(-4 * time.Hour)))
	is.Equal(len(sv.Route), 3) // Monday 21:00 UTC is Tuesday there
	is.Equal(sv.Route[0].Latitude, 50.1)

	// A link made today starts its route when it was made.
	s.clock.Set(day.Add(9*time.Hour + 30*time.Minute))
	late := s.link(time.Hour)
	s.clock.Set(day.Add(10 * time.Hour))
	s.at(s.p, s.v.ID, day.Add(9*time.Hour+45*time.Minute), 50.4, 8.4)
	sv, err = s.svc.Edge().SharedVehicle(ctx, late.Token, time.UTC)
	is.NoErr(err)
	is.True(sv.RouteFrom.Equal(late.Link.CreatedAt))
	is.Equal(len(sv.Route), 1)
	is.Equal(sv.Route[0].Latitude, 50.4)
}

func TestSharedVehicleBeforeItsFirstReport(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	nl := s.link(time.Hour)
	sv, err := s.svc.Edge().SharedVehicle(ctx, nl.Token, nil)
	is.NoErr(err)
	is.True(sv.Position == nil)
	is.Equal(len(sv.Route), 0)
}

func TestSharedVehicleRouteKeepsItsLatestPart(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	s.clock.Set(shareT0.Add(-4 * time.Hour))
	nl := s.link(8 * time.Hour)
	s.clock.Set(shareT0)
	n := fleet.MaxShareRoutePoints + 500
	start := shareT0.Add(-time.Duration(n) * time.Second)
	for done := 0; done < n; {
		pts := make([]fleet.Point, min(fleet.MaxPointsPerVehicleBatch, n-done))
		for i := range pts {
			pts[i] = fleet.Point{Latitude: 50, Longitude: 8, Timestamp: start.Add(time.Duration(done+i+1) * time.Second)}
		}
		_, err := s.svc.IngestLocations(ctx, s.p, s.v.ID, pts)
		is.NoErr(err)
		done += len(pts)
	}
	sv, err := s.svc.Edge().SharedVehicle(ctx, nl.Token, time.UTC)
	is.NoErr(err)
	is.True(sv.RouteCut)
	is.True(len(sv.Route) <= fleet.MaxShareRoutePoints)
	is.True(len(sv.Route) > fleet.MaxShareRoutePoints/4)        // not needlessly short
	is.True(sv.Route[len(sv.Route)-1].Timestamp.Equal(shareT0)) // the latest point is drawn
}

func TestSharedVehicleRefusesAlike(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	unknown := strings.Repeat("A", fleet.ShareTokenLen)
	expiring, revoked, gone := s.link(time.Hour), s.link(8*time.Hour), s.link(8*time.Hour)
	_, err := s.svc.RevokeShareLink(ctx, s.p, revoked.Link.ID)
	is.NoErr(err)
	_, err = s.svc.Edge().SharedVehicle(ctx, expiring.Token, nil)
	is.NoErr(err) // shows until it expires
	s.clock.Advance(time.Hour)
	_, err = s.svc.DeleteVehicle(ctx, s.p, s.v.ID) // gone's vehicle (and the others')
	is.NoErr(err)

	var first *fleet.Error
	for _, token := range []string{unknown, "short", strings.Repeat("!", fleet.ShareTokenLen), unknown[:42] + "B",
		expiring.Token, revoked.Token, gone.Token, ""} {
		_, err := s.svc.Edge().SharedVehicle(ctx, token, nil)
		var fe *fleet.Error
		is.True(errors.As(err, &fe))
		is.Equal(fe.Code, fleet.CodeNotFound)
		if first == nil {
			first = fe
		}
		is.Equal(fe.Message, first.Message) // one answer for every token that shows nothing
		_, err = s.svc.Edge().SubscribeShared(ctx, token)
		is.Equal(fleet.ErrorMessage(err), first.Message)
	}
	is.Equal(s.count(), 0) // the vehicle's links went with it
}

// ended reports whether sub has ended, without waiting.
func ended(sub *fleet.Subscription) bool {
	select {
	case <-sub.Done():
		return true
	default:
		return false
	}
}

func TestShareStreamCarriesItsVehicleAndEndsOnRevoke(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	nl := s.link(time.Hour)
	sub, err := s.svc.Edge().SubscribeShared(ctx, nl.Token)
	is.NoErr(err)
	defer sub.Close()
	is.Equal(s.svc.Jobs().OpenShareStreams(), 1)
	s.at(s.p, s.v2.ID, shareT0.Add(-2*time.Second), 1, 1)         // another vehicle of the account
	s.at(s.other, s.otherV.ID, shareT0.Add(-2*time.Second), 2, 2) // another account's
	s.at(s.p, s.v.ID, shareT0.Add(-time.Second), 50, 8)
	items := readAll(t, sub, 10)
	is.Equal(len(items), 1) // the shared vehicle's report only
	is.Equal(items[0].VehicleID, s.v.ID)
	is.Equal(items[0].Record.Location.Latitude, 50.0)

	n, err := s.svc.Jobs().CheckShareStreams(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // the link stands
	is.True(!ended(sub))
	_, err = s.svc.RevokeShareLink(ctx, s.p, nl.Link.ID)
	is.NoErr(err)
	is.True(ended(sub)) // at once, on the server that revoked it
	is.True(errors.Is(sub.Err(), fleet.ErrShareLinkEnded))
	sub.Close()
	is.Equal(s.svc.Jobs().OpenShareStreams(), 0)
}

func TestShareStreamsEndOnEveryService(t *testing.T) {
	is := is.New(t)
	store := memstore.New()
	clock := testclock.New(shareT0)
	a := fleet.NewService(store, fleet.Options{Now: clock.Now})
	b := fleet.NewService(store, fleet.Options{Now: clock.Now})
	s := newSharerOn(t, a, clock)

	revoked, expiring, kept := s.link(8*time.Hour), s.link(time.Hour), s.link(8*time.Hour)
	exp := shareT0.Add(8 * time.Hour)
	onV2, err := a.CreateShareLink(ctx, s.p, fleet.ShareLinkInput{VehicleID: s.v2.ID, ExpiresAt: &exp})
	is.NoErr(err)
	open := func(token string) *fleet.Subscription {
		sub, err := b.Edge().SubscribeShared(ctx, token)
		is.NoErr(err)
		t.Cleanup(sub.Close)
		return sub
	}
	subRevoked, subRevoked2, subExpiring, subKept, subV2 := open(revoked.Token), open(revoked.Token), open(expiring.Token), open(kept.Token), open(onV2.Token)

	_, err = a.RevokeShareLink(ctx, s.p, revoked.Link.ID) // on the other service
	is.NoErr(err)
	is.True(!ended(subRevoked)) // b has not checked yet
	n, err := b.Jobs().CheckShareStreams(ctx)
	is.NoErr(err)
	is.Equal(n, 2) // both streams of the revoked link, in one check
	is.True(ended(subRevoked) && ended(subRevoked2))
	is.True(errors.Is(subRevoked.Err(), fleet.ErrShareLinkEnded))
	is.True(!ended(subExpiring) && !ended(subKept) && !ended(subV2))

	clock.Advance(time.Hour) // expiring's end
	n, err = b.Jobs().CheckShareStreams(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
	is.True(ended(subExpiring))

	_, err = a.DeleteVehicle(ctx, s.p, s.v2.ID) // on the other service
	is.NoErr(err)
	n, err = b.Jobs().CheckShareStreams(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
	is.True(ended(subV2))
	is.True(!ended(subKept)) // the link that stands stays open
	is.Equal(b.Jobs().OpenShareStreams(), 1)
}

func TestShareStreamsPerLink(t *testing.T) {
	is := is.New(t)
	s := newSharer(t, memstore.New())
	nl := s.link(time.Hour)
	var subs []*fleet.Subscription
	for range fleet.MaxShareStreams {
		sub, err := s.svc.Edge().SubscribeShared(ctx, nl.Token)
		is.NoErr(err)
		subs = append(subs, sub)
	}
	_, err := s.svc.Edge().SubscribeShared(ctx, nl.Token)
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	other := s.link(time.Hour)
	sub, err := s.svc.Edge().SubscribeShared(ctx, other.Token)
	is.NoErr(err) // another link has its own
	sub.Close()
	subs[0].Close()
	sub, err = s.svc.Edge().SubscribeShared(ctx, nl.Token)
	is.NoErr(err) // a closed one frees its place
	sub.Close()
	for _, sub := range subs[1:] {
		sub.Close()
	}
	is.Equal(s.svc.Jobs().OpenShareStreams(), 0)
}
