package fleethttp_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// report posts one location point of the vehicle, one second after the
// previous, with an odometer reading.
func (e *env) report(key, vehicleID string, odometer float64) {
	e.t.Helper()
	e.clock.Advance(time.Second)
	p := pt(e.clock.Now(), 52.5, 13.4, 60)
	p["odometer_km"] = odometer
	if r := e.do("POST", "/v1/vehicles/"+vehicleID+"/locations", key, batch(p)); r.status != http.StatusOK {
		e.t.Fatalf("report: %d %s", r.status, r.body)
	}
}

func (e *env) workOrder(key, vehicleID, title string, extra ...any) map[string]any {
	e.t.Helper()
	body := map[string]any{"vehicle_id": vehicleID, "title": title}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	r := e.do("POST", "/v1/maintenance/work_orders", key, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create work order: %d %s", r.status, r.body)
	}
	return r.data()
}

func (e *env) schedule(key string, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/maintenance/schedules", key, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create schedule: %d %s", r.status, r.body)
	}
	return r.data()
}

// eventsOf returns the data of the account's events of a type.
func (e *env) eventsOf(key, typ string) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, ev := range e.do("GET", "/v1/events?limit=500&type="+typ, key, nil).list() {
		out = append(out, ev.(map[string]any)["data"].(map[string]any))
	}
	return out
}

func errorFields(r *response) []string {
	var out []string
	for _, d := range r.json()["error"].(map[string]any)["details"].([]any) {
		out = append(out, d.(map[string]any)["field"].(string))
	}
	sort.Strings(out)
	return out
}

// TestMaintenanceAsANewUser is maintenance as a new user meets it: a schedule every
// 10,000 km on a vehicle at 9,600 km turns due_soon when a location report
// moves the odometer there, overdue past 10,000 km, and back to ok when its
// work order completes; each transition's event appears once.
func TestMaintenanceAsANewUser(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Truck 7", "odometer_km", 9000)
	s := e.schedule(key, map[string]any{"vehicle_id": veh, "name": "Oil change", "interval_km": 10000,
		"last_service_odometer_km": 0, "auto_create_work_order": true})
	id := s["schedule_id"].(string)
	is.Equal(s["status"], "ok")
	is.Equal(s["next_due_odometer_km"], 10000.0)
	is.Equal(s["next_due_date"], nil) // no interval_days
	is.Equal(s["last_service_date"], "2026-11-22")
	get := func() map[string]any { return e.do("GET", "/v1/maintenance/schedules/"+id, key, nil).data() }

	e.report(key, veh, 9600)
	is.Equal(get()["status"], "due_soon")
	e.report(key, veh, 9800)
	is.Equal(get()["status"], "due_soon")
	wos := e.do("GET", "/v1/maintenance/work_orders?vehicle_id="+veh, key, nil).list()
	is.Equal(len(wos), 1) // opened by the schedule
	wo := wos[0].(map[string]any)
	woID := wo["work_order_id"].(string)
	is.Equal(wo["schedule_id"], id)
	is.Equal(wo["title"], "Oil change")
	is.Equal(wo["status"], "open")

	e.report(key, veh, 10000.5)
	is.Equal(get()["status"], "overdue")
	e.report(key, veh, 10100)
	is.Equal(get()["status"], "overdue")
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders", key, nil).list()), 1) // still one: once per cycle

	r := e.do("PATCH", "/v1/maintenance/work_orders/"+woID, key, map[string]any{"status": "in_progress", "assigned_to": "Garage North"})
	is.Equal(r.status, http.StatusOK)
	e.clock.Advance(3 * time.Hour)
	r = e.do("PATCH", "/v1/maintenance/work_orders/"+woID, key, map[string]any{"status": "completed", "cost_cents": 18950, "currency": "EUR", "odometer_km": 10100})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["completed_at"], "2026-11-22T13:00:04Z")
	is.Equal(r.data()["cost_cents"], 18950.0)

	s = get()
	is.Equal(s["status"], "ok") // back to ok
	is.Equal(s["last_service_odometer_km"], 10100.0)
	is.Equal(s["next_due_odometer_km"], 20100.0)
	e.report(key, veh, 10200)
	is.Equal(get()["status"], "ok")

	soon := e.eventsOf(key, "maintenance.due_soon")
	is.Equal(len(soon), 1) // each transition's event once
	is.Equal(soon[0]["schedule_id"], id)
	is.Equal(soon[0]["status"], "due_soon") // the schedule after the change
	over := e.eventsOf(key, "maintenance.overdue")
	is.Equal(len(over), 1)
	is.Equal(over[0]["status"], "overdue")
	is.Equal(len(e.eventsOf(key, "work_order.created")), 1)
	var moves []string
	for _, d := range e.eventsOf(key, "work_order.status_changed") {
		is.Equal(d["work_order_id"], woID)
		is.Equal(d["vehicle_id"], veh)
		moves = append(moves, d["from"].(string)+">"+d["to"].(string))
	}
	is.Equal(moves, []string{"open>in_progress", "in_progress>completed"})
}

func TestWorkOrderLifecycle(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van")
	w := e.workOrder(key, veh, " Replace brake pads ", "due_date", "2026-12-01")
	id := w["work_order_id"].(string)
	is.True(strings.HasPrefix(id, "wo_"))
	is.Equal(w["title"], "Replace brake pads")
	is.Equal(w["status"], "open")
	is.Equal(w["priority"], "medium") // the default
	is.Equal(w["due_date"], "2026-12-01")
	for _, f := range []string{"description", "assigned_to", "odometer_km", "cost_cents", "currency", "schedule_id", "completed_at"} {
		is.Equal(w[f], nil) // unset is null
	}
	is.Equal(e.do("GET", "/v1/maintenance/work_orders/"+id, key, nil).data(), w)

	r := e.do("PATCH", "/v1/maintenance/work_orders/"+id, key, `{"priority":"urgent","description":"Squealing front left","due_date":null}`)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["priority"], "urgent")
	is.Equal(r.data()["due_date"], nil)               // null clears
	is.Equal(r.data()["title"], "Replace brake pads") // absent stays

	updatedAt := r.data()["updated_at"]
	e.clock.Advance(time.Minute)
	r = e.do("PATCH", "/v1/maintenance/work_orders/"+id, key, `{"status":"open","priority":"urgent"}`)
	is.Equal(r.status, http.StatusOK) // repeating the status and values: a no-op
	is.Equal(r.data()["updated_at"], updatedAt)

	for _, to := range []string{"on_hold", "in_progress", "completed"} {
		r = e.do("PATCH", "/v1/maintenance/work_orders/"+id, key, map[string]any{"status": to})
		is.Equal(r.status, http.StatusOK)
		is.Equal(r.data()["status"], to)
	}
	is.Equal(r.data()["completed_at"], "2026-11-22T10:01:00Z")
	r = e.do("PATCH", "/v1/maintenance/work_orders/"+id, key, map[string]any{"cost_cents": 42000, "currency": "USD"})
	is.Equal(r.status, http.StatusOK) // the cost, known late
	is.Equal(r.data()["cost_cents"], 42000.0)
	is.Equal(r.data()["status"], "completed")

	var types []string
	for _, ev := range e.do("GET", "/v1/events?limit=100", key, nil).list() {
		if typ := ev.(map[string]any)["type"].(string); strings.HasPrefix(typ, "work_order.") {
			types = append(types, typ)
		}
	}
	is.Equal(types, []string{"work_order.created", "work_order.updated", "work_order.status_changed",
		"work_order.status_changed", "work_order.status_changed", "work_order.updated"}) // the no-op emitted nothing
}

// TestWorkOrderEveryMoveOverHTTP tries every (from, to) pair through PATCH:
// allowed moves succeed, every other is 409 invalid_state_transition naming
// both, and changes nothing.
func TestWorkOrderEveryMoveOverHTTP(t *testing.T) {
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van")
	allowed := map[string]bool{
		"open>in_progress": true, "open>on_hold": true, "open>completed": true, "open>cancelled": true,
		"in_progress>on_hold": true, "in_progress>completed": true, "in_progress>cancelled": true,
		"on_hold>in_progress": true, "on_hold>cancelled": true,
	}
	statuses := []string{"open", "in_progress", "on_hold", "completed", "cancelled"}
	forbidden := 0
	for _, from := range statuses {
		for _, to := range statuses {
			t.Run(from+">"+to, func(t *testing.T) {
				is := is.New(t)
				id := e.workOrder(key, veh, from+" to "+to)["work_order_id"].(string)
				path := "/v1/maintenance/work_orders/" + id
				if from != "open" {
					is.Equal(e.do("PATCH", path, key, map[string]any{"status": from}).status, http.StatusOK)
				}
				before := e.do("GET", path, key, nil).data()
				events := len(e.do("GET", "/v1/events?limit=500", key, nil).list())
				r := e.do("PATCH", path, key, map[string]any{"status": to, "assigned_to": "someone"})
				switch {
				case from == to || allowed[from+">"+to]:
					is.Equal(r.status, http.StatusOK)
					is.Equal(r.data()["status"], to)
				default:
					forbidden++
					is.Equal(r.status, http.StatusConflict)
					is.Equal(r.errCode(), "invalid_state_transition")
					is.Equal(r.errMessage(), fmt.Sprintf("A work order cannot move from %s to %s.", from, to))
					is.Equal(e.do("GET", path, key, nil).data(), before)                        // nothing changed
					is.Equal(len(e.do("GET", "/v1/events?limit=500", key, nil).list()), events) // no event
				}
			})
		}
	}
	is.New(t).Equal(forbidden, 11) // 25 pairs: 5 repeats, 9 allowed moves
}

func TestMaintenanceValidationNamesEveryField(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	_, other := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van")
	foreign := e.vehicle(other, "Not yours")

	r := e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": "", "title": " ", "priority": "asap",
		"due_date": "2026-13-01", "odometer_km": -1, "cost_cents": -5, "currency": "eur", "assigned_to": strings.Repeat("a", 101)})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(errorFields(r), []string{"assigned_to", "cost_cents", "currency", "due_date", "odometer_km", "priority", "title", "vehicle_id"})
	r = e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": veh, "title": "x", "cost_cents": 100})
	is.Equal(errorFields(r), []string{"currency"}) // required with a cost
	r = e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": foreign, "title": "x"})
	is.Equal(r.status, http.StatusUnprocessableEntity) // another account's vehicle
	is.Equal(errorFields(r), []string{"vehicle_id"})
	r = e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": veh, "title": "x", "schedule_id": "sch_nope"})
	is.Equal(errorFields(r), []string{"schedule_id"})

	r = e.do("POST", "/v1/maintenance/schedules", key, map[string]any{"vehicle_id": "veh_nope", "name": "",
		"last_service_date": "2026-11-23", "last_service_odometer_km": -1})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(errorFields(r), []string{"interval_days", "interval_engine_hours", "interval_km", "last_service_date", "last_service_odometer_km", "name", "vehicle_id"})
	r = e.do("POST", "/v1/maintenance/schedules", key, map[string]any{"vehicle_id": foreign, "name": "x", "interval_days": 0, "interval_km": 0})
	is.Equal(errorFields(r), []string{"interval_days", "interval_km", "vehicle_id"})

	w := e.workOrder(key, veh, "x")["work_order_id"].(string)
	r = e.do("PATCH", "/v1/maintenance/work_orders/"+w, key, `{"title":null,"status":"done","priority":null}`)
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(errorFields(r), []string{"priority", "status", "title"})
	r = e.do("PATCH", "/v1/maintenance/work_orders/"+w, key, `{"cost_cents":12.5}`)
	is.Equal(r.status, http.StatusBadRequest) // minor units are whole
	is.Equal(errorFields(r), []string{"cost_cents"})

	s := e.schedule(key, map[string]any{"vehicle_id": veh, "name": "x", "interval_days": 30})["schedule_id"].(string)
	r = e.do("PATCH", "/v1/maintenance/schedules/"+s, key, `{"interval_days":null,"name":"","last_service_odometer_km":null,"auto_create_work_order":null}`)
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(errorFields(r), []string{"auto_create_work_order", "interval_days", "interval_engine_hours", "interval_km", "last_service_odometer_km", "name"})
	r = e.do("PATCH", "/v1/maintenance/schedules/"+s, key, `{"auto_create_work_order":"yes"}`)
	is.Equal(r.status, http.StatusBadRequest)
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders", key, nil).list()), 1) // nothing was created by the failures
}

func TestMaintenanceReadOnlyFields(t *testing.T) {
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van")
	w := e.workOrder(key, veh, "x")["work_order_id"].(string)
	s := e.schedule(key, map[string]any{"vehicle_id": veh, "name": "x", "interval_days": 30})["schedule_id"].(string)
	cases := []struct {
		method, path string
		body         string
	}{
		{"POST", "/v1/maintenance/work_orders", `{"vehicle_id":"` + veh + `","title":"x","status":"completed"}`},
		{"POST", "/v1/maintenance/work_orders", `{"vehicle_id":"` + veh + `","title":"x","work_order_id":"wo_x"}`},
		{"POST", "/v1/maintenance/work_orders", `{"vehicle_id":"` + veh + `","title":"x","completed_at":"2026-11-22T10:00:00Z"}`},
		{"PATCH", "/v1/maintenance/work_orders/" + w, `{"vehicle_id":"` + veh + `"}`},
		{"PATCH", "/v1/maintenance/work_orders/" + w, `{"schedule_id":"` + s + `"}`},
		{"PATCH", "/v1/maintenance/work_orders/" + w, `{"created_at":"2026-11-22T10:00:00Z"}`},
		{"PATCH", "/v1/maintenance/work_orders/" + w, `{"colour":"red"}`},
		{"POST", "/v1/maintenance/schedules", `{"vehicle_id":"` + veh + `","name":"x","interval_days":30,"status":"ok"}`},
		{"POST", "/v1/maintenance/schedules", `{"vehicle_id":"` + veh + `","name":"x","interval_days":30,"next_due_date":"2027-01-01"}`},
		{"PATCH", "/v1/maintenance/schedules/" + s, `{"status":"ok"}`},
		{"PATCH", "/v1/maintenance/schedules/" + s, `{"next_due_odometer_km":5}`},
		{"PATCH", "/v1/maintenance/schedules/" + s, `{"vehicle_id":"` + veh + `"}`},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.body, func(t *testing.T) {
			is := is.New(t)
			r := e.do(tc.method, tc.path, key, tc.body)
			is.Equal(r.status, http.StatusBadRequest)
			is.Equal(r.errCode(), "invalid_request")
		})
	}
	is := is.New(t)
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders", key, nil).list()), 1)
	is.Equal(len(e.do("GET", "/v1/maintenance/schedules", key, nil).list()), 1)
}

func TestMaintenanceFiltersAndPages(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	v1, v2 := e.vehicle(key, "One"), e.vehicle(key, "Two")
	var high []string
	for i := range 5 {
		pr := "low"
		if i%2 == 0 {
			pr = "high"
		}
		w := e.workOrder(key, v1, fmt.Sprint("w", i), "priority", pr)
		if pr == "high" {
			high = append(high, w["work_order_id"].(string))
		}
	}
	e.workOrder(key, v2, "other vehicle", "priority", "high")
	is.Equal(e.do("PATCH", "/v1/maintenance/work_orders/"+high[1], key, map[string]any{"status": "cancelled"}).status, http.StatusOK)

	var walked []string
	cursor := ""
	for range 5 {
		path := "/v1/maintenance/work_orders?priority=high&vehicle_id=" + v1 + "&limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.do("GET", path, key, nil)
		for _, w := range r.list() {
			walked = append(walked, w.(map[string]any)["work_order_id"].(string))
		}
		pg := r.json()["pagination"].(map[string]any)
		if !pg["has_more"].(bool) {
			is.Equal(pg["next_cursor"], nil)
			break
		}
		cursor = pg["next_cursor"].(string)
	}
	is.Equal(walked, high) // filters and cursor together, in creation order
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders?status=cancelled", key, nil).list()), 1)
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders?status=open&priority=high", key, nil).list()), 3)

	e.schedule(key, map[string]any{"vehicle_id": v1, "name": "a", "interval_days": 30})
	e.schedule(key, map[string]any{"vehicle_id": v2, "name": "b", "interval_km": 1000, "last_service_odometer_km": 0})
	e.report(key, v2, 950)
	is.Equal(len(e.do("GET", "/v1/maintenance/schedules?vehicle_id="+v1, key, nil).list()), 1)
	due := e.do("GET", "/v1/maintenance/schedules?status=due_soon", key, nil).list()
	is.Equal(len(due), 1)
	is.Equal(due[0].(map[string]any)["vehicle_id"], v2)
	is.Equal(len(e.do("GET", "/v1/maintenance/schedules?status=overdue", key, nil).list()), 0)

	for _, q := range []string{"work_orders?status=done", "work_orders?priority=asap", "work_orders?vehicle_id=truck",
		"work_orders?limit=501", "work_orders?cursor=nope", "schedules?status=late", "schedules?vehicle_id=x", "schedules?limit=0"} {
		r := e.do("GET", "/v1/maintenance/"+q, key, nil)
		is.Equal(r.status, http.StatusBadRequest) // bad filter
		is.Equal(r.errCode(), "invalid_request")
	}
}

func TestScheduleLifecycleAndCalendar(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van", "odometer_km", 1234.5)
	s := e.schedule(key, map[string]any{"vehicle_id": veh, "name": "Inspection", "interval_days": 180, "interval_km": 10000})
	id := s["schedule_id"].(string)
	is.True(strings.HasPrefix(id, "sch_"))
	is.Equal(s["last_service_date"], "2026-11-22")  // defaults: today
	is.Equal(s["last_service_odometer_km"], 1234.5) // and the vehicle's odometer
	is.Equal(s["next_due_date"], "2027-05-21")      // + 180 days
	is.Equal(s["next_due_odometer_km"], 11234.5)    // + 10,000 km
	is.Equal(s["auto_create_work_order"], false)    // the default
	is.Equal(s["status"], "ok")

	r := e.do("PATCH", "/v1/maintenance/schedules/"+id, key, `{"interval_km":null,"interval_days":30,"auto_create_work_order":true}`)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["next_due_odometer_km"], nil)
	is.Equal(r.data()["next_due_date"], "2026-12-22")

	e.clock.Advance(24 * 24 * time.Hour)                                                    // 2026-12-16: 6 days left
	is.Equal(e.do("GET", "/v1/maintenance/schedules/"+id, key, nil).data()["status"], "ok") // until the check runs
	n, err := e.svc.Jobs().CheckMaintenance(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
	is.Equal(e.do("GET", "/v1/maintenance/schedules/"+id, key, nil).data()["status"], "due_soon")
	wos := e.do("GET", "/v1/maintenance/work_orders", key, nil).list()
	is.Equal(len(wos), 1)
	is.Equal(wos[0].(map[string]any)["due_date"], "2026-12-22") // the schedule's due date
	is.Equal(len(e.eventsOf(key, "maintenance.due_soon")), 1)

	r = e.do("DELETE", "/v1/maintenance/schedules/"+id, key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data(), map[string]any{"schedule_id": id, "deleted": true})
	is.Equal(e.do("GET", "/v1/maintenance/schedules/"+id, key, nil).status, http.StatusNotFound)
	woID := wos[0].(map[string]any)["work_order_id"].(string)
	r = e.do("PATCH", "/v1/maintenance/work_orders/"+woID, key, map[string]any{"status": "completed"})
	is.Equal(r.status, http.StatusOK) // its work order stays and completes
	is.Equal(r.data()["schedule_id"], id)

	s2 := e.schedule(key, map[string]any{"vehicle_id": veh, "name": "Tyres", "interval_days": 365})["schedule_id"].(string)
	is.Equal(e.do("DELETE", "/v1/vehicles/"+veh, key, nil).status, http.StatusOK)
	is.Equal(e.do("GET", "/v1/maintenance/schedules/"+s2, key, nil).status, http.StatusNotFound) // went with the vehicle
	is.Equal(e.do("GET", "/v1/maintenance/work_orders/"+woID, key, nil).status, http.StatusOK)   // history stays
}

func TestMaintenanceOfAnotherAccountIsNotFound(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, alice := e.account(fleet.PlanPro)
	_, bob := e.account(fleet.PlanPro)
	bobVeh := e.vehicle(bob, "Bob's")
	aliceVeh := e.vehicle(alice, "Alice's")
	w := e.workOrder(bob, bobVeh, "Bob's work")["work_order_id"].(string)
	s := e.schedule(bob, map[string]any{"vehicle_id": bobVeh, "name": "Bob's", "interval_days": 30})["schedule_id"].(string)
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/maintenance/work_orders/" + w, nil},
		{"PATCH", "/v1/maintenance/work_orders/" + w, map[string]any{"status": "cancelled"}},
		{"GET", "/v1/maintenance/schedules/" + s, nil},
		{"PATCH", "/v1/maintenance/schedules/" + s, map[string]any{"name": "mine"}},
		{"DELETE", "/v1/maintenance/schedules/" + s, nil},
		{"GET", "/v1/maintenance/work_orders/wo_nope", nil},
		{"GET", "/v1/maintenance/schedules/sch_nope", nil},
	} {
		r := e.do(req.method, req.path, alice, req.body)
		is.Equal(r.status, http.StatusNotFound)
		is.Equal(r.errCode(), "not_found")
	}
	r := e.do("POST", "/v1/maintenance/work_orders", alice, map[string]any{"vehicle_id": aliceVeh, "title": "x", "schedule_id": s})
	is.Equal(r.status, http.StatusUnprocessableEntity) // another account's schedule
	is.Equal(errorFields(r), []string{"schedule_id"})
	r = e.do("POST", "/v1/maintenance/schedules", alice, map[string]any{"vehicle_id": bobVeh, "name": "x", "interval_days": 1})
	is.Equal(errorFields(r), []string{"vehicle_id"})
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders", alice, nil).list()), 0)
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders?vehicle_id="+bobVeh, alice, nil).list()), 0)
	is.Equal(len(e.do("GET", "/v1/maintenance/schedules", alice, nil).list()), 0)
	is.Equal(len(e.do("GET", "/v1/maintenance/schedules?vehicle_id="+bobVeh, alice, nil).list()), 0)
	is.Equal(e.do("GET", "/v1/maintenance/work_orders/"+w, bob, nil).data()["status"], "open") // unchanged
	is.Equal(e.do("GET", "/v1/maintenance/schedules/"+s, bob, nil).data()["name"], "Bob's")
	is.Equal(len(e.eventsOf(alice, "work_order.created")), 0)
}

func TestMaintenancePermissions(t *testing.T) {
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	veh := e.vehicle(admin, "Van")
	w := e.workOrder(admin, veh, "x")["work_order_id"].(string)
	s := e.schedule(admin, map[string]any{"vehicle_id": veh, "name": "x", "interval_days": 30})["schedule_id"].(string)
	vehiclesOnly := e.keyWith(admin, "vehicles:write")
	reader := e.keyWith(admin, "maintenance:read")
	writer := e.keyWith(admin, "maintenance:write")
	newWO := map[string]any{"vehicle_id": veh, "title": "y"}
	newSch := map[string]any{"vehicle_id": veh, "name": "y", "interval_days": 10}
	for _, req := range []struct {
		method, path string
		body         any
		write        bool
		ok           int
	}{
		{"GET", "/v1/maintenance/work_orders", nil, false, 200},
		{"POST", "/v1/maintenance/work_orders", newWO, true, 201},
		{"GET", "/v1/maintenance/work_orders/" + w, nil, false, 200},
		{"PATCH", "/v1/maintenance/work_orders/" + w, map[string]any{"priority": "high"}, true, 200},
		{"GET", "/v1/maintenance/schedules", nil, false, 200},
		{"POST", "/v1/maintenance/schedules", newSch, true, 201},
		{"GET", "/v1/maintenance/schedules/" + s, nil, false, 200},
		{"PATCH", "/v1/maintenance/schedules/" + s, map[string]any{"name": "z"}, true, 200},
		{"DELETE", "/v1/maintenance/schedules/" + s, nil, true, 200},
	} {
		t.Run(req.method+" "+req.path, func(t *testing.T) {
			is := is.New(t)
			r := e.do(req.method, req.path, vehiclesOnly, req.body)
			is.Equal(r.status, http.StatusForbidden)
			want := "maintenance:read"
			if req.write {
				want = "maintenance:write"
			}
			is.True(strings.Contains(r.errMessage(), want)) // names the permission
			if req.write {
				is.Equal(e.do(req.method, req.path, reader, req.body).status, http.StatusForbidden)
			} else {
				is.Equal(e.do(req.method, req.path, reader, req.body).status, req.ok)
			}
			is.Equal(e.do(req.method, req.path, writer, req.body).status, req.ok) // write implies read
		})
	}
}

func TestCreateWorkOrderIsIdempotent(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van")
	body := map[string]any{"vehicle_id": veh, "title": "Once"}
	first := e.do("POST", "/v1/maintenance/work_orders", key, body, "Idempotency-Key", "wo-1")
	again := e.do("POST", "/v1/maintenance/work_orders", key, body, "Idempotency-Key", "wo-1")
	is.Equal(again.status, http.StatusCreated)
	is.Equal(again.header.Get("Idempotent-Replayed"), "true")
	is.Equal(string(again.body), string(first.body))
	is.Equal(len(e.do("GET", "/v1/maintenance/work_orders", key, nil).list()), 1)
	is.Equal(e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": veh, "title": "Other"}, "Idempotency-Key", "wo-1").status, http.StatusConflict)
}
