package fleetweb_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// shared is account A's vehicle with a share link, and another vehicle of
// A and one of B that are not shared.
type shared struct {
	link         fleet.NewShareLink
	v, other, vb fleet.Vehicle
	pa, pb       fleet.Principal
}

func (e *env) share(t *testing.T, ttl time.Duration) shared {
	t.Helper()
	ctx := context.Background()
	s := shared{pa: fleet.SystemPrincipal(e.accA), pb: fleet.SystemPrincipal(e.accB)}
	var err error
	if s.v, err = e.svc.CreateVehicle(ctx, s.pa, fleet.Vehicle{Name: "Van 3", LicensePlate: "SECRET-PLATE"}); err != nil {
		t.Fatal(err)
	}
	if s.other, err = e.svc.CreateVehicle(ctx, s.pa, fleet.Vehicle{Name: "Hidden Truck"}); err != nil {
		t.Fatal(err)
	}
	if s.vb, err = e.svc.CreateVehicle(ctx, s.pb, fleet.Vehicle{Name: "Bravo Bus"}); err != nil {
		t.Fatal(err)
	}
	exp := e.svc.Now().Add(ttl)
	if s.link, err = e.svc.CreateShareLink(ctx, s.pa, fleet.ShareLinkInput{VehicleID: s.v.ID, ExpiresAt: &exp}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s shared) url(e *env) string { return e.srv.URL + fleet.ShareLinkPath(s.link.Token) }

func report(t *testing.T, svc *fleet.Service, p fleet.Principal, vehicleID string, at time.Time, lat, lon float64) {
	t.Helper()
	if _, err := svc.IngestLocations(context.Background(), p, vehicleID, []fleet.Point{{Latitude: lat, Longitude: lon, Timestamp: at}}); err != nil {
		t.Fatal(err)
	}
}

func TestSharePageShowsTheVehicleAndNothingElse(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC))
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{})
	yesterday := clock.Now().Add(-20 * time.Hour)
	s := e.share(t, 8*time.Hour)
	clock.Advance(10 * time.Minute)
	report(t, e.svc, s.pa, s.v.ID, yesterday, 47.1111, 8.1111) // before the day and the link
	report(t, e.svc, s.pa, s.v.ID, clock.Now().Add(-time.Minute), 47.3769, 8.5417)
	report(t, e.svc, s.pa, s.other.ID, clock.Now().Add(-time.Minute), 46.9999, 7.9999)
	report(t, e.svc, s.pb, s.vb.ID, clock.Now().Add(-time.Minute), 45.5555, 6.5555)

	r := do(t, e.client(t), "GET", s.url(e), nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Acme"))                       // the company
	is.True(strings.Contains(r.body, "Van 3"))                      // the vehicle
	is.True(strings.Contains(r.body, "2026-11-24 23:00 UTC"))       // when the link expires
	is.True(strings.Contains(r.body, "47.37690, 8.54170"))          // the position
	is.True(strings.Contains(r.body, `"route":[[47.3769,8.5417]]`)) // since the link was made: nothing earlier
	for _, hidden := range []string{s.v.ID, s.other.ID, s.vb.ID, e.accA.ID, e.accB.ID, s.link.Link.ID, "SECRET-PLATE",
		"Hidden Truck", "Bravo", "46.9999", "45.5555", "47.1111", "/vehicles", "/map", "sign-in"} {
		is.True(!strings.Contains(r.body, hidden)) // nothing else: no id, no other vehicle, no earlier history, no way into the dashboard
	}
	is.Equal(r.header.Get("Cache-Control"), "no-store")
	is.Equal(r.header.Get("Referrer-Policy"), "no-referrer")
	is.Equal(r.header.Get("X-Robots-Tag"), "noindex, nofollow")
	dash := do(t, e.client(t), "GET", e.srv.URL+"/sign-in", nil)
	is.True(dash.header.Get("Content-Security-Policy") != "")
	is.Equal(r.header.Get("Content-Security-Policy"), dash.header.Get("Content-Security-Policy")) // the dashboard's policy

	// The page speaks in the viewer's time zone.
	c := e.client(t)
	u, _ := url.Parse(e.srv.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "fleet_tz", Value: "Pacific/Kiritimati", Path: "/"}})
	r = do(t, c, "GET", s.url(e), nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, `data-zone="Pacific/Kiritimati"`))
	is.True(strings.Contains(r.body, "2026-11-25 13:00")) // the expiry, there
	is.True(!strings.Contains(r.body, "47.1111"))         // still nothing before the link was made
}

// Every token that shows nothing gets the same answer.
func TestSharePageRefusesAlike(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC))
	e := newEnvWith(t, fleet.Options{Now: clock.Now, AddressLimit: fleet.AddressLimitOff}, fleetweb.Options{})
	ctx := context.Background()
	expiring := e.share(t, time.Hour)
	revoked := e.share(t, 8*time.Hour)
	gone := e.share(t, 8*time.Hour)
	_, err := e.svc.RevokeShareLink(ctx, revoked.pa, revoked.link.Link.ID)
	is.NoErr(err)
	_, err = e.svc.DeleteVehicle(ctx, gone.pa, gone.v.ID)
	is.NoErr(err)
	is.Equal(do(t, e.client(t), "GET", expiring.url(e), nil).status, http.StatusOK)
	clock.Advance(time.Hour)

	unknown := strings.Repeat("A", fleet.ShareTokenLen)
	var first resp
	for i, token := range []string{unknown, expiring.link.Token, revoked.link.Token, gone.link.Token, "short", "%00", unknown + "A"} {
		r := do(t, e.client(t), "GET", e.srv.URL+fleet.ShareLinkPath(token), nil)
		is.Equal(r.status, http.StatusNotFound)
		if i == 0 {
			first = r
			is.True(strings.Contains(r.body, "does not exist, or it has expired or been revoked"))
		}
		is.Equal(r.body, first.body) // token
		is.Equal(r.header.Get("Referrer-Policy"), "no-referrer")
		ev := do(t, e.client(t), "GET", e.srv.URL+fleet.ShareLinkPath(token)+"/events", nil, "Accept", "text/event-stream")
		is.Equal(ev.status, http.StatusNotFound) // the stream too
	}
	is.True(!strings.Contains(e.logs.String(), unknown)) // a token is never logged
}

// The brake on token guessing: past the address's allowance, 429.
func TestSharePageBrakesGuessing(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, fleet.Options{AddressLimit: 3}, fleetweb.Options{})
	s := e.share(t, time.Hour)
	c := e.client(t)
	guess := func(i int) resp {
		return do(t, c, "GET", e.srv.URL+fleet.ShareLinkPath(strings.Repeat(string(rune('A'+i)), fleet.ShareTokenLen)), nil)
	}
	for i := range 3 {
		is.Equal(guess(i).status, http.StatusNotFound)
	}
	r := guess(3)
	is.Equal(r.status, http.StatusTooManyRequests)
	is.True(r.header.Get("Retry-After") != "")
	is.True(strings.Contains(r.body, "Too many requests"))
	ev := do(t, c, "GET", e.srv.URL+fleet.ShareLinkPath(strings.Repeat("Z", fleet.ShareTokenLen))+"/events", nil)
	is.Equal(ev.status, http.StatusTooManyRequests)                // the stream counts too
	is.Equal(do(t, c, "GET", s.url(e), nil).status, http.StatusOK) // a valid link takes nothing and is never braked, as a valid key
}

// sseReader reads a share stream's events in the background.
type sseReader struct {
	events chan [2]string // event, data
	done   chan struct{}
}

func openShareStream(t *testing.T, client *http.Client, url string) *sseReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("open the stream: %d %s", res.StatusCode, b)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("the stream is %s", ct)
	}
	rd := &sseReader{events: make(chan [2]string, 64), done: make(chan struct{})}
	opened := make(chan struct{})
	go func() {
		defer close(rd.done)
		defer res.Body.Close()
		br := bufio.NewReader(res.Body)
		var ev, data string
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			switch {
			case strings.HasPrefix(line, "retry:"):
				close(opened)
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimSpace(line[len("event: "):])
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimSpace(line[len("data: "):])
			case line == "\n" && ev != "":
				rd.events <- [2]string{ev, data}
				ev, data = "", ""
			}
		}
	}()
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not open")
	}
	return rd
}

// next returns the next event within the deadline.
func (rd *sseReader) next(t *testing.T, within time.Duration) (string, string) {
	t.Helper()
	select {
	case ev := <-rd.events:
		return ev[0], ev[1]
	case <-time.After(within):
		t.Fatalf("no event within %s", within)
	}
	return "", ""
}

// closedWithin reports whether the stream ended within d (0: by now).
func (rd *sseReader) closedWithin(d time.Duration) bool {
	if d == 0 {
		select {
		case <-rd.done:
			return true
		default:
			return false
		}
	}
	select {
	case <-rd.done:
		return true
	case <-time.After(d):
		return false
	}
}

// The stream carries its vehicle's reports only, and ends at once when the
// link is revoked with the API's DELETE on the same server.
func TestShareStreamCarriesItsVehicleAndEndsOnRevoke(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	api := httptest.NewServer(fleethttp.NewHandler(e.svc))
	t.Cleanup(api.Close)
	s := e.share(t, time.Hour)
	rd := openShareStream(t, e.client(t), s.url(e)+"/events")

	now := time.Now().UTC()
	report(t, e.svc, s.pa, s.other.ID, now, 46.9999, 7.9999) // another vehicle of the account
	report(t, e.svc, s.pb, s.vb.ID, now, 45.5555, 6.5555)    // another account's
	report(t, e.svc, s.pa, s.v.ID, now, 47.3769, 8.5417)
	ev, data := rd.next(t, 5*time.Second)
	is.Equal(ev, "position")
	is.Equal(data, `{"latitude":47.3769,"longitude":8.5417,"timestamp":"`+now.Truncate(time.Microsecond).Format(time.RFC3339Nano)+`"}`) // where and when, no id

	req, _ := http.NewRequest("DELETE", api.URL+"/v1/share_links/"+s.link.Link.ID, nil)
	req.Header.Set("Authorization", "Bearer "+e.keyA.Secret)
	res, err := api.Client().Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK) // revoked
	ev, _ = rd.next(t, 5*time.Second)
	is.Equal(ev, "ended")                     // the page is told
	is.True(rd.closedWithin(5 * time.Second)) // and the stream ends, at once on the server that revoked it
	is.Equal(e.svc.Jobs().OpenShareStreams(), 0)
}

// Two servers on one PostgreSQL: a link revoked on one ends the stream open
// on the other within 5 seconds (the other checks its share streams every
// second, as fleetserver runs it).
func TestShareStreamEndsOnEveryServer(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.NewSchema(t, pgtest.DSN(t))
	ctx := context.Background()
	open := func() *fleet.Service {
		st, err := sqlstore.Open(ctx, dsn)
		is.NoErr(err)
		t.Cleanup(func() { st.Close() })
		return fleet.NewService(st, fleet.Options{})
	}
	a, b := open(), open()
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { defer close(ran); b.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-ran })
	srvB := httptest.NewServer(fleetweb.New(b, fleetweb.Options{}))
	t.Cleanup(srvB.Close)
	apiA := httptest.NewServer(fleethttp.NewHandler(a))
	t.Cleanup(apiA.Close)

	acc, key, err := a.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(acc)
	v, err := a.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Van 3"})
	is.NoErr(err)
	exp := a.Now().Add(time.Hour)
	link, err := a.CreateShareLink(ctx, p, fleet.ShareLinkInput{VehicleID: v.ID, ExpiresAt: &exp})
	is.NoErr(err)
	kept, err := a.CreateShareLink(ctx, p, fleet.ShareLinkInput{VehicleID: v.ID, ExpiresAt: &exp})
	is.NoErr(err)

	page := do(t, srvB.Client(), "GET", srvB.URL+fleet.ShareLinkPath(link.Token), nil)
	is.Equal(page.status, http.StatusOK) // server B shows what server A made
	rd := openShareStream(t, srvB.Client(), srvB.URL+fleet.ShareLinkPath(link.Token)+"/events")
	other := openShareStream(t, srvB.Client(), srvB.URL+fleet.ShareLinkPath(kept.Token)+"/events")
	n, err := b.Jobs().CheckShareStreams(ctx)
	is.NoErr(err)
	is.Equal(n, 0)                  // B's check, as Run makes it every second, leaves standing links open
	is.True(!rd.closedWithin(0))    // open
	is.True(!other.closedWithin(0)) // open

	req, _ := http.NewRequest("DELETE", apiA.URL+"/v1/share_links/"+link.Link.ID, nil) // on server A
	req.Header.Set("Authorization", "Bearer "+key.Secret)
	res, err := apiA.Client().Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	ev, _ := rd.next(t, 5*time.Second) // B's Run ends it
	is.Equal(ev, "ended")
	is.True(rd.closedWithin(time.Second))
	n, err = b.Jobs().CheckShareStreams(ctx)
	is.NoErr(err)
	is.Equal(n, 0)
	is.True(!other.closedWithin(0)) // the other link's stream stays
	is.Equal(do(t, srvB.Client(), "GET", srvB.URL+fleet.ShareLinkPath(link.Token), nil).status, http.StatusNotFound)
}

func (e *env) activeLinks(t *testing.T, vehicleID string) []fleet.ShareLink {
	t.Helper()
	l, err := e.svc.ListShareLinks(context.Background(), fleet.SystemPrincipal(e.accA),
		fleet.ShareLinkFilter{VehicleID: vehicleID, Status: fleet.ShareLinkActive}, fleet.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// The dashboard's share links: an admin makes one for a chosen time, sees
// it once, and revokes it; a viewer sees the list and changes nothing.
func TestShareLinksOnTheDashboard(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{PublicURL: "https://fleet.example.com"})
	s := e.share(t, time.Hour) // one link already
	admin := e.signedIn(t, "admin@acme.test", adminPassword)
	base := e.srv.URL + "/vehicles/" + s.v.ID + "/share"

	veh := do(t, admin, "GET", e.srv.URL+"/vehicles/"+s.v.ID, nil)
	is.True(strings.Contains(veh.body, `href="/vehicles/`+s.v.ID+`/share">Share live location…</a>`))
	r := do(t, admin, "GET", base, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Share Van 3&#39;s live location"))
	is.True(strings.Contains(r.body, `id="link-`+s.link.Link.ID+`"`)) // the active link
	is.True(!strings.Contains(r.body, s.link.Token))                  // never its address again
	for _, choice := range []string{"1 hour", "8 hours", "24 hours", "7 days"} {
		is.True(strings.Contains(r.body, ">"+choice+"</option>"))
	}

	before := time.Now()
	r = do(t, admin, "POST", base, url.Values{"duration": {"24h"}})
	is.Equal(r.status, http.StatusSeeOther)
	shown := r.header.Get("Location")
	r = do(t, admin, "GET", e.srv.URL+shown, nil)
	is.Equal(r.status, http.StatusOK)
	links := e.activeLinks(t, s.v.ID)
	is.Equal(len(links), 2)
	made := links[1]
	is.True(!made.ExpiresAt.Before(before.Add(24*time.Hour).Truncate(time.Second)) && made.ExpiresAt.Before(time.Now().Add(24*time.Hour+time.Second)))
	i := strings.Index(r.body, `value="https://fleet.example.com/s/`)
	is.True(i > 0) // the link, under the public address, in a field to copy
	token := r.body[i+len(`value="https://fleet.example.com/s/`):][:fleet.ShareTokenLen]
	is.Equal(fleet.HashShareToken(token), made.Hash)
	is.True(strings.Contains(r.body, `data-copy="new-link"`))
	again := do(t, admin, "GET", e.srv.URL+shown, nil)
	is.True(!strings.Contains(again.body, token)) // shown once
	is.True(strings.Contains(again.body, "was shown once"))

	r = do(t, admin, "POST", base, url.Values{"duration": {"30d"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "How long must be 1 hour, 8 hours, 24 hours or 7 days."))
	is.Equal(len(e.activeLinks(t, s.v.ID)), 2) // nothing made

	// A viewer sees the links, gets no form, and a forged one is refused.
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r = do(t, viewer, "GET", base, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, `id="link-`+made.ID+`"`))
	is.True(!strings.Contains(r.body, "Create link") && !strings.Contains(r.body, ">Revoke<"))
	r = do(t, viewer, "POST", base, url.Values{"duration": {"1h"}})
	is.Equal(r.status, http.StatusForbidden)
	is.True(strings.Contains(r.body, "Your role is viewer"))
	r = do(t, viewer, "POST", base+"/"+made.ID+"/revoke", url.Values{})
	is.Equal(r.status, http.StatusForbidden)
	is.Equal(len(e.activeLinks(t, s.v.ID)), 2)

	// Revoke: the link's page stops opening.
	is.Equal(do(t, e.client(t), "GET", e.srv.URL+fleet.ShareLinkPath(token), nil).status, http.StatusOK)
	r = do(t, admin, "POST", e.srv.URL+"/vehicles/"+s.other.ID+"/share/"+made.ID+"/revoke", url.Values{})
	is.Equal(r.status, http.StatusNotFound) // not that vehicle's link
	r = do(t, admin, "POST", base+"/"+made.ID+"/revoke", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "is revoked: it no longer opens"))
	is.True(!strings.Contains(r.body, `id="link-`+made.ID+`"`))
	is.Equal(do(t, e.client(t), "GET", e.srv.URL+fleet.ShareLinkPath(token), nil).status, http.StatusNotFound)

	// Another account's admin finds nothing of it.
	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	is.Equal(do(t, other, "GET", base, nil).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", base, url.Values{"duration": {"1h"}}).status, http.StatusNotFound)
}
