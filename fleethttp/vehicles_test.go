package fleethttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func (e *env) vehicle(secret, name string, extra ...any) string {
	e.t.Helper()
	body := map[string]any{"name": name}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	r := e.do("POST", "/v1/vehicles", secret, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create vehicle: %d %s", r.status, r.body)
	}
	return r.data()["vehicle_id"].(string)
}

func pt(t time.Time, lat, lon, speed float64) map[string]any {
	return map[string]any{"latitude": lat, "longitude": lon, "timestamp": t.Format(time.RFC3339Nano), "speed": speed}
}

func batch(points ...map[string]any) map[string]any { return map[string]any{"locations": points} }

func TestVehicleLifecycle(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	r := e.do("POST", "/v1/vehicles", key, map[string]any{
		"name": "Truck 7", "vin": "1hgbh41jxmn109186", "make": "Volvo", "year": 2024, "tags": []string{"north"}, "external_id": "erp-7",
	})
	is.Equal(r.status, http.StatusCreated)
	v := r.data()
	id := v["vehicle_id"].(string)
	is.Equal(v["vin"], "1HGBH41JXMN109186") // stored upper-case
	is.Equal(v["status"], "offline")        // never reported
	is.Equal(v["last_location"], nil)
	is.Equal(v["model"], nil) // unset is null

	r = e.do("POST", "/v1/vehicles", key, map[string]any{"name": "Other", "external_id": "erp-7"})
	is.Equal(r.status, http.StatusConflict) // external_id unique per account

	r = e.do("PATCH", "/v1/vehicles/"+id, key, `{"model":"FH16","make":null,"tags":["north","reefer"]}`)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["model"], "FH16")
	is.Equal(r.data()["make"], nil)           // null clears
	is.Equal(r.data()["year"], float64(2024)) // absent stays
	is.Equal(r.data()["tags"], []any{"north", "reefer"})

	r = e.do("PATCH", "/v1/vehicles/"+id, key, `{"status":"moving"}`)
	is.Equal(r.status, http.StatusBadRequest) // status is read-only
	r = e.do("PATCH", "/v1/vehicles/"+id, key, `{"name":null}`)
	is.Equal(r.status, http.StatusUnprocessableEntity) // name is required
	r = e.do("PATCH", "/v1/vehicles/"+id, key, `{"year":"soon"}`)
	is.Equal(r.status, http.StatusBadRequest)
	is.Equal(r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["field"], "year")

	r = e.do("GET", "/v1/vehicles?q=truck&tag=reefer", key, nil)
	is.Equal(len(r.list()), 1)
	r = e.do("GET", "/v1/vehicles?status=moving", key, nil)
	is.Equal(len(r.list()), 0)
	is.Equal(e.do("GET", "/v1/vehicles?status=flying", key, nil).status, http.StatusBadRequest)

	r = e.do("DELETE", "/v1/vehicles/"+id, key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["deleted"], true)
	is.Equal(e.do("GET", "/v1/vehicles/"+id, key, nil).status, http.StatusNotFound)

	var types []string
	for _, ev := range e.do("GET", "/v1/events", key, nil).list() {
		types = append(types, ev.(map[string]any)["type"].(string))
	}
	is.Equal(types, []string{"vehicle.created", "vehicle.updated", "vehicle.deleted"}) // failed changes emit nothing
	created := e.do("GET", "/v1/events?type=vehicle.created", key, nil).list()[0].(map[string]any)["data"].(map[string]any)
	is.Equal(created["vehicle_id"], id)
	is.Equal(created["model"], nil) // event data is the API's vehicle JSON: unset is null
	is.Equal(created["tags"], []any{"north"})
	is.Equal(len(e.do("GET", "/v1/events?type=vehicle.updated", key, nil).list()), 1)
}

func TestVehicleValidationNamesEveryField(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	r := e.do("POST", "/v1/vehicles", key, map[string]any{"name": "", "vin": "IIIIIIIIIIIIIIIII", "year": 1800, "tags": []string{""}, "odometer_km": -1})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	fields := map[string]bool{}
	for _, d := range r.json()["error"].(map[string]any)["details"].([]any) {
		fields[d.(map[string]any)["field"].(string)] = true
	}
	is.Equal(len(fields), 5)
	is.True(fields["name"] && fields["vin"] && fields["year"] && fields["tags[0]"] && fields["odometer_km"])
	is.Equal(len(e.do("GET", "/v1/vehicles", key, nil).list()), 0)
}

// TestTrackingAsAUser: create a vehicle, post a batch, see it in the
// snapshot with the seed's fields, read it back in time order.
func TestTrackingAsAUser(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	id := e.vehicle(key, "Van 1")
	now := e.clock.Now()
	r := e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(
		pt(now.Add(-2*time.Minute), 52.52, 13.40, 40),
		pt(now.Add(-1*time.Minute), 52.53, 13.41, 55.5),
		pt(now.Add(-3*time.Minute), 52.51, 13.39, 30), // out of order
	))
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["accepted"], float64(3))
	is.Equal(r.data()["duplicates"], float64(0))

	snap := e.do("GET", "/v1/vehicles/locations", key, nil)
	is.Equal(snap.status, http.StatusOK)
	recs := snap.list()
	is.Equal(len(recs), 1)
	rec := recs[0].(map[string]any)
	is.Equal(rec["vehicle_id"], id)
	is.Equal(rec["name"], "Van 1")
	is.Equal(rec["status"], "moving")
	is.Equal(rec["speed"], 55.5)
	loc := rec["location"].(map[string]any)
	is.Equal(loc["latitude"], 52.53) // the newest point, not the last posted
	is.Equal(loc["longitude"], 13.41)
	is.Equal(loc["timestamp"], "2026-11-22T09:59:00Z")

	hist := e.do("GET", "/v1/vehicles/"+id+"/locations", key, nil).list()
	is.Equal(len(hist), 3)
	for i, want := range []string{"2026-11-22T09:57:00Z", "2026-11-22T09:58:00Z", "2026-11-22T09:59:00Z"} {
		is.Equal(hist[i].(map[string]any)["timestamp"], want) // ascending time
	}

	r = e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(pt(now.Add(-2*time.Minute), 1, 1, 0), pt(now, 52.54, 13.42, 0)))
	is.Equal(r.data()["accepted"], float64(1))
	is.Equal(r.data()["duplicates"], float64(1)) // same vehicle and timestamp: skipped
	v := e.do("GET", "/v1/vehicles/"+id, key, nil).data()
	is.Equal(v["status"], "idle")
	is.Equal(v["last_location"].(map[string]any)["latitude"], 52.54)

	r = e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(pt(now.Add(-time.Hour), 50, 10, 80)))
	is.Equal(r.data()["accepted"], float64(1))
	v = e.do("GET", "/v1/vehicles/"+id, key, nil).data()
	is.Equal(v["last_location"].(map[string]any)["latitude"], 52.54) // an older point does not move it back
}

func TestBatchWithOneBadPointStoresNothing(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	id := e.vehicle(key, "Van")
	now := e.clock.Now()
	r := e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(
		pt(now.Add(-3*time.Minute), 52, 13, 10),
		pt(now.Add(-2*time.Minute), 52, 13, 10),
		pt(now.Add(-1*time.Minute), 52, 13, 10),
		pt(now, 91, 13, 10),
	))
	is.Equal(r.status, http.StatusUnprocessableEntity)
	details := r.json()["error"].(map[string]any)["details"].([]any)
	is.Equal(len(details), 1)
	is.Equal(details[0].(map[string]any)["field"], "locations[3].latitude")         // names the bad index
	is.Equal(len(e.do("GET", "/v1/vehicles/"+id+"/locations", key, nil).list()), 0) // nothing stored

	r = e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(pt(now.Add(6*time.Minute), 52, 13, 10)))
	is.Equal(r.status, http.StatusUnprocessableEntity) // more than 5 minutes ahead
	is.Equal(r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["field"], "locations[0].timestamp")
	r = e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(pt(now.Add(4*time.Minute), 52, 13, 10)))
	is.Equal(r.status, http.StatusOK) // within 5 minutes is fine

	r = e.do("POST", "/v1/vehicles/"+id+"/locations", key, `{"locations":[{"latitude":1,"longitude":2}]}`)
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["field"], "locations[0].timestamp")
	is.Equal(e.do("POST", "/v1/vehicles/"+id+"/locations", key, `{"locations":[]}`).status, http.StatusUnprocessableEntity)
	many := make([]map[string]any, 1001)
	for i := range many {
		many[i] = pt(now.Add(-time.Duration(i)*time.Second), 1, 1, 1)
	}
	is.Equal(e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(many...)).status, http.StatusUnprocessableEntity)
}

func TestBulkIngest(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	_, other := e.account(fleet.PlanPro)
	a, b := e.vehicle(key, "A"), e.vehicle(key, "B")
	foreign := e.vehicle(other, "not yours")
	now := e.clock.Now()
	withID := func(id string, p map[string]any) map[string]any { p["vehicle_id"] = id; return p }
	r := e.do("POST", "/v1/vehicles/locations", key, batch(
		withID(a, pt(now.Add(-time.Minute), 1, 1, 10)),
		withID(b, pt(now.Add(-time.Minute), 2, 2, 0)),
		withID(foreign, pt(now, 3, 3, 0)),
	))
	is.Equal(r.status, http.StatusUnprocessableEntity) // another account's vehicle is named, nothing stored
	is.Equal(r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["field"], "locations[2].vehicle_id")
	is.Equal(len(e.do("GET", "/v1/vehicles/locations", key, nil).list()), 0)

	r = e.do("POST", "/v1/vehicles/locations", key, batch(
		withID(a, pt(now.Add(-time.Minute), 1, 1, 10)),
		withID(b, pt(now.Add(-time.Minute), 2, 2, 0)),
		withID(a, pt(now.Add(-time.Minute), 1, 1, 10)), // twice in one batch
	))
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["accepted"], float64(2))
	is.Equal(r.data()["duplicates"], float64(1))
	is.Equal(len(e.do("GET", "/v1/vehicles/locations?vehicle_id="+b, key, nil).list()), 1)
	is.Equal(len(e.do("GET", "/v1/vehicles/locations?status=moving", key, nil).list()), 1)
}

func TestOdometerFollowsReports(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	id := e.vehicle(key, "V", "odometer_km", 9600)
	p := pt(e.clock.Now(), 1, 1, 50)
	p["odometer_km"] = 9650.5
	e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(p))
	is.Equal(e.do("GET", "/v1/vehicles/"+id, key, nil).data()["odometer_km"], 9650.5)
}

func TestStatusChangesWithTimeAlone(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	id := e.vehicle(key, "V")
	now := e.clock.Now()
	e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(pt(now.Add(-time.Minute), 1, 1, 60), pt(now, 1, 1, 0)))
	status := func() string { return e.do("GET", "/v1/vehicles/"+id, key, nil).data()["status"].(string) }
	is.Equal(status(), "idle")

	e.clock.Advance(4 * time.Minute)
	_, err := e.svc.Jobs().Sweep(ctx)
	is.NoErr(err)
	is.Equal(status(), "idle") // stationary under 5 minutes
	e.clock.Advance(time.Minute)
	n, err := e.svc.Jobs().Sweep(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(status(), "stopped") // no new report needed
	e.clock.Advance(25 * time.Minute)
	_, err = e.svc.Jobs().Sweep(ctx)
	is.NoErr(err)
	is.Equal(status(), "offline")

	var changes []string
	for _, ev := range e.do("GET", "/v1/events?type=vehicle.status_changed", key, nil).list() {
		d := ev.(map[string]any)["data"].(map[string]any)
		is.Equal(d["vehicle_id"], id)
		changes = append(changes, d["from"].(string)+">"+d["to"].(string))
	}
	is.Equal(changes, []string{"offline>moving", "moving>idle", "idle>stopped", "stopped>offline"})
	n, err = e.svc.Jobs().Sweep(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // nothing changes twice
}

func TestHistoryWindowPagingAndPlanReach(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanFree)
	id := e.vehicle(key, "V")
	now := e.clock.Now()
	var pts []map[string]any
	for i := range 10 {
		pts = append(pts, pt(now.Add(-time.Duration(i)*time.Hour), 1, float64(i), 0))
	}
	pts = append(pts, pt(now.Add(-8*24*time.Hour), 1, 1, 0)) // beyond the free plan's 7 days
	is.Equal(e.do("POST", "/v1/vehicles/"+id+"/locations", key, batch(pts...)).status, http.StatusOK)

	from := now.Add(-30 * 24 * time.Hour).Format(time.RFC3339)
	var got []any
	cursor := ""
	for pages := 0; pages < 10; pages++ {
		path := "/v1/vehicles/" + id + "/locations?limit=4&from=" + from
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.do("GET", path, key, nil)
		is.Equal(r.status, http.StatusOK)
		got = append(got, r.list()...)
		pg := r.json()["pagination"].(map[string]any)
		if !pg["has_more"].(bool) {
			break
		}
		cursor = pg["next_cursor"].(string)
	}
	is.Equal(len(got), 10) // the 8-day-old point is out of the plan's reach
	is.Equal(got[0].(map[string]any)["timestamp"], "2026-11-22T01:00:00Z")

	is.Equal(len(e.do("GET", "/v1/vehicles/"+id+"/locations", key, nil).list()), 10) // default: last 24 h
	to := now.Add(-5 * time.Hour).Format(time.RFC3339)
	is.Equal(len(e.do("GET", "/v1/vehicles/"+id+"/locations?to="+to, key, nil).list()), 5)
	is.Equal(e.do("GET", "/v1/vehicles/"+id+"/locations?from=yesterday", key, nil).status, http.StatusBadRequest)
	is.Equal(e.do("GET", "/v1/vehicles/"+id+"/locations?limit=10001", key, nil).status, http.StatusBadRequest)
	is.Equal(e.do("GET", "/v1/vehicles/"+id+"/locations?cursor=xyz", key, nil).status, http.StatusBadRequest)
}

func TestVehicleOfAnotherAccountIsNotFoundEverywhere(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, alice := e.account(fleet.PlanPro)
	_, bob := e.account(fleet.PlanPro)
	id := e.vehicle(bob, "Bob's")
	now := e.clock.Now()
	e.do("POST", "/v1/vehicles/"+id+"/locations", bob, batch(pt(now, 1, 1, 10)))
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/vehicles/" + id, nil},
		{"PATCH", "/v1/vehicles/" + id, map[string]any{"name": "mine"}},
		{"DELETE", "/v1/vehicles/" + id, nil},
		{"GET", "/v1/vehicles/" + id + "/locations", nil},
		{"POST", "/v1/vehicles/" + id + "/locations", batch(pt(now.Add(time.Second), 2, 2, 0))},
	} {
		is.Equal(e.do(req.method, req.path, alice, req.body).status, http.StatusNotFound)
	}
	is.Equal(len(e.do("GET", "/v1/vehicles", alice, nil).list()), 0)
	is.Equal(len(e.do("GET", "/v1/vehicles/locations", alice, nil).list()), 0)
	is.Equal(len(e.do("GET", "/v1/vehicles/locations?vehicle_id="+id, alice, nil).list()), 0)
	is.Equal(len(e.do("GET", "/v1/events", alice, nil).list()), 0)
	bobEvent := e.do("GET", "/v1/events", bob, nil).list()[0].(map[string]any)["event_id"].(string)
	is.Equal(e.do("GET", "/v1/events/"+bobEvent, alice, nil).status, http.StatusNotFound)
	v := e.do("GET", "/v1/vehicles/"+id, bob, nil).data()
	is.Equal(v["name"], "Bob's") // unchanged
	is.Equal(len(e.do("GET", "/v1/vehicles/"+id+"/locations", bob, nil).list()), 1)
}

// sseClient reads a Server-Sent Events stream line by line.
type sseClient struct {
	t      *testing.T
	lines  chan string
	cancel func()
}

func (e *env) openStream(key, query, lastID string) *sseClient {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/vehicles/locations/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		e.t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	c := &sseClient{t: e.t, lines: make(chan string, 1000), cancel: func() { cancel(); res.Body.Close() }}
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	e.t.Cleanup(c.cancel)
	return c
}

type sseEvent struct {
	id, event string
	data      map[string]any
}

// next returns the next event, skipping comments and the retry hint.
func (c *sseClient) next() sseEvent {
	c.t.Helper()
	var ev sseEvent
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatal("stream ended")
			}
			switch {
			case strings.HasPrefix(l, "id: "):
				ev.id = l[4:]
			case strings.HasPrefix(l, "event: "):
				ev.event = l[7:]
			case strings.HasPrefix(l, "data: "):
				json.Unmarshal([]byte(l[6:]), &ev.data)
			case l == "" && ev.event != "":
				return ev
			}
		case <-timeout:
			c.t.Fatal("no event on the stream")
		}
	}
}

func TestStreamLiveAndResume(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	_, other := e.account(fleet.PlanPro)
	a, b := e.vehicle(key, "A"), e.vehicle(key, "B")
	stranger := e.vehicle(other, "S")
	all := e.openStream(key, "", "")
	onlyB := e.openStream(key, "?vehicle_id="+b, "")
	now := e.clock.Now()

	e.do("POST", "/v1/vehicles/"+stranger+"/locations", other, batch(pt(now, 9, 9, 9)))
	e.do("POST", "/v1/vehicles/"+a+"/locations", key, batch(pt(now.Add(-2*time.Second), 1, 1, 20), pt(now.Add(-time.Second), 1.1, 1, 30)))
	e.do("POST", "/v1/vehicles/"+b+"/locations", key, batch(pt(now, 2, 2, 0)))

	first := all.next()
	is.Equal(first.event, "location")
	is.Equal(first.data["vehicle_id"], a) // another account's report never shows
	is.Equal(first.data["name"], "A")
	is.Equal(first.data["location"].(map[string]any)["latitude"], 1.0)
	second := all.next()
	is.Equal(second.data["speed"], 30.0)
	third := all.next()
	is.Equal(third.data["vehicle_id"], b)
	is.True(first.id < second.id && second.id < third.id)
	is.Equal(onlyB.next().data["vehicle_id"], b) // the filter holds

	// A client that reconnects with Last-Event-ID gets what it missed first.
	all.cancel()
	e.do("POST", "/v1/vehicles/"+a+"/locations", key, batch(pt(now.Add(time.Second), 1.2, 1, 40)))
	again := e.openStream(key, "", first.id)
	is.Equal(again.next().id, second.id)
	is.Equal(again.next().id, third.id)
	missed := again.next()
	is.Equal(missed.data["location"].(map[string]any)["latitude"], 1.2)
	e.do("POST", "/v1/vehicles/"+b+"/locations", key, batch(pt(now.Add(2*time.Second), 2.5, 2, 0)))
	is.Equal(again.next().data["location"].(map[string]any)["latitude"], 2.5) // then live data
}

func TestStreamNeedsPermission(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	limited := e.keyWith(key, "vehicles:read")
	r := e.do("GET", "/v1/vehicles/locations/stream", limited, nil)
	is.Equal(r.status, http.StatusForbidden)
	r = e.do("GET", "/v1/vehicles/locations/stream", key, nil, "Last-Event-ID", "not-a-number")
	is.Equal(r.status, http.StatusBadRequest)
	_ = fmt.Sprint()
}

// A -0 in a body is stored and answered as 0, on the location batches'
// fast decoder and on the strict one; an external_id spelt in another
// Unicode normalisation is the same external_id (409). The rules are
// fleet's; this checks that the API reaches them.
func TestNumbersAndExternalIDsOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	r := e.do("POST", "/v1/vehicles", key, `{"name":"Van","odometer_km":-0,"external_id":"Cafe\u0301"}`)
	is.Equal(r.status, http.StatusCreated)
	is.True(strings.Contains(string(r.body), `"odometer_km":0,`))
	is.Equal(r.data()["external_id"], "Caf\u00e9")
	veh := r.data()["vehicle_id"].(string)
	is.Equal(e.do("POST", "/v1/vehicles", key, `{"name":"Other","external_id":"Caf\u00e9"}`).status, http.StatusConflict)

	at := func(d time.Duration) string { return e.clock.Now().Add(-d).Format(time.RFC3339) }
	fast := `{"locations":[{"latitude":-0,"longitude":-0.0,"timestamp":"` + at(2*time.Minute) + `","speed":-0,"heading":-0e3}]}`
	strict := `{"locations":[{"latitude":-0,"longitude":-0.0,"timestamp":"` + at(time.Minute) + `","speed":-0,"\u0068eading":-0e3,"odometer_km":-0}]}`
	for _, body := range []string{fast, strict} {
		r = e.do("POST", "/v1/vehicles/"+veh+"/locations", key, body)
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.data()["accepted"], 1.0)
	}
	r = e.do("POST", "/v1/vehicles/"+veh+"/locations", key, `{"locations":[{"latitude":1,"longitude":1,"timestamp":"`+at(0)+`","speed":1,"\u0073peed":2}]}`)
	is.Equal(r.status, http.StatusBadRequest) // speed given twice, however spelt
	r = e.do("GET", "/v1/vehicles/"+veh+"/locations", key, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(!strings.Contains(string(r.body), "-0")) // no -0 anywhere
	is.True(strings.Contains(string(r.body), `"latitude":0,"longitude":0,`))
}

// A query parameter that takes one value is refused when given twice,
// naming it (of ?limit=1&limit=500 neither is taken); a repeatable one
// (vehicle_id on the locations) takes every value as before.
func TestRepeatedQueryParameters(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	v1, v2, v3 := e.vehicle(key, "A"), e.vehicle(key, "B"), e.vehicle(key, "C")
	for _, v := range []string{v1, v2, v3} {
		is.Equal(e.do("POST", "/v1/vehicles/"+v+"/locations", key, batch(pt(e.clock.Now(), 1, 1, 10))).status, http.StatusOK)
	}
	r := e.do("GET", "/v1/vehicles/locations?vehicle_id="+v1+"&vehicle_id="+v3, key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(len(r.list()), 2) // repeatable: both vehicles

	for _, path := range []string{"/v1/vehicles?limit=1&limit=500", "/v1/vehicles/locations?status=moving&vehicle_id=" + v1 + "&status=offline",
		"/v1/vehicles/" + v1 + "/locations?from=" + T0.Add(-time.Hour).Format(time.RFC3339) + "&from=" + T0.Add(-time.Hour).Format(time.RFC3339)} {
		r := e.do("GET", path, key, nil)
		is.Equal(r.status, http.StatusBadRequest) // path
		is.Equal(r.errCode(), fleet.CodeInvalidRequest)
		is.True(strings.Contains(r.errMessage(), "given 2 times"))
	}
	r = e.do("GET", "/v1/vehicles?limit=1&limit=500", key, nil)
	is.True(namesField(r, "limit"))
}
