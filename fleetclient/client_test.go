package fleetclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

func TestClientAgainstTheRealHandler(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(2))
	ctx := context.Background()

	acc, err := c.Account(ctx)
	is.NoErr(err)
	is.Equal(acc.AccountID, a.ID)
	is.Equal(acc.Plan, "pro")

	// Keys: create, walk pages, get, rotate, usage, revoke.
	nk, err := c.CreateKey(ctx, fleet.KeyParams{Name: "ci", Permissions: []string{"vehicles:read"}})
	is.NoErr(err)
	is.True(fleet.CheckSecret(nk.Key))
	for range 2 {
		_, err := c.CreateKey(ctx, fleet.KeyParams{Name: "more"})
		is.NoErr(err)
	}
	keys := collect(t, c.Keys(ctx))
	is.Equal(len(keys), 4) // two pages of two
	got, err := c.Key(ctx, nk.KeyID)
	is.NoErr(err)
	is.Equal(got.Name, "ci")
	rot, err := c.RotateKey(ctx, nk.KeyID, 10*time.Minute)
	is.NoErr(err)
	is.Equal(rot.PreviousKey.KeyID, nk.KeyID)
	u, err := c.KeyUsage(ctx, a.ID, 2)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // not a key id
	u, err = c.KeyUsage(ctx, keys[0].KeyID, 2)
	is.NoErr(err)
	is.Equal(len(u.Hours), 2)
	rev, err := c.RevokeKey(ctx, rot.KeyID)
	is.NoErr(err)
	is.Equal(rev.Status, "revoked")

	// Errors read the same on both sides of the wire.
	_, err = c.Vehicle(ctx, "veh_nope")
	var fe *fleet.Error
	is.True(errors.As(err, &fe))
	is.Equal(fe.Code, fleet.CodeNotFound)
	_, err = c.CreateVehicle(ctx, fleet.Vehicle{Name: "", VIN: "bad"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	is.True(errors.As(err, &fe) && len(fe.Details) == 2)

	// Vehicles and locations.
	year := 2024
	v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Truck", Make: "Volvo", Year: &year, Tags: []string{"north"}})
	is.NoErr(err)
	is.Equal(v.Status, fleet.StatusOffline)
	is.Equal(*v.Year, 2024)
	v2, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Van"})
	is.NoErr(err)
	v, err = c.UpdateVehicle(ctx, v.ID, fleet.VehiclePatch{Make: fleet.Optional[string]{Set: true}, Model: fleet.Optional[string]{Set: true, Value: "FH"}})
	is.NoErr(err)
	is.Equal(v.Make, "") // cleared
	is.Equal(v.Model, "FH")
	is.Equal(len(collect(t, c.Vehicles(ctx, fleetclient.VehicleQuery{Tag: "north"}))), 1)

	now := e.clock.Now()
	speed := 50.0
	res, err := c.IngestLocations(ctx, v.ID, []fleet.Point{{Latitude: 52, Longitude: 13, Timestamp: now.Add(-time.Minute), Speed: &speed}, {Latitude: 52.1, Longitude: 13, Timestamp: now, Speed: &speed}})
	is.NoErr(err)
	is.Equal(res.Accepted, 2)
	res, err = c.IngestBulk(ctx, []fleet.Point{{VehicleID: v2.ID, Latitude: 48, Longitude: 11, Timestamp: now}})
	is.NoErr(err)
	is.Equal(res.Accepted, 1)
	snap := collect(t, c.Locations(ctx, fleetclient.VehicleQuery{}))
	is.Equal(len(snap), 2)
	is.Equal(snap[0].VehicleID, v.ID)
	is.Equal(snap[0].Status, fleet.StatusMoving)
	hist := collect(t, c.History(ctx, v.ID, now.Add(-time.Hour), time.Time{}))
	is.Equal(len(hist), 2)
	is.True(hist[0].Timestamp.Before(hist[1].Timestamp))

	evs := collect(t, c.Events(ctx, fleet.EventVehicleCreated, time.Time{}))
	is.Equal(len(evs), 2)
	ev, err := c.Event(ctx, evs[0].ID)
	is.NoErr(err)
	is.Equal(ev.Type, fleet.EventVehicleCreated)

	is.NoErr(c.DeleteVehicle(ctx, v2.ID))
	_, err = c.Vehicle(ctx, v2.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

func TestClientMaintenance(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()))
	odo := 9600.0
	v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Truck", OdometerKm: &odo})
	is.NoErr(err)
	km, last := 10000.0, 0.0
	s, err := c.CreateSchedule(ctx, fleet.Schedule{VehicleID: v.ID, Name: "Oil", IntervalKm: &km, LastServiceOdometerKm: &last})
	is.NoErr(err)
	is.Equal(s.Status, fleet.ScheduleDueSoon) // 400 km to go
	s, err = c.UpdateSchedule(ctx, s.ID, fleet.SchedulePatch{Name: fleet.Optional[string]{Set: true, Value: "Oil change"}})
	is.NoErr(err)
	is.Equal(s.Name, "Oil change")
	got, err := c.Schedule(ctx, s.ID)
	is.NoErr(err)
	is.Equal(got.ID, s.ID)
	is.Equal(len(collect(t, c.Schedules(ctx, fleet.ScheduleFilter{VehicleID: v.ID}))), 1)

	cost := int64(12_500)
	w, err := c.CreateWorkOrder(ctx, fleet.WorkOrder{VehicleID: v.ID, Title: "Oil change", ScheduleID: s.ID, CostCents: &cost, Currency: "EUR"})
	is.NoErr(err)
	is.Equal(w.Status, fleet.WorkOrderStatus("open"))
	_, err = c.UpdateWorkOrder(ctx, w.ID, fleet.WorkOrderPatch{Status: fleet.Optional[fleet.WorkOrderStatus]{Set: true, Value: "in_progress"}})
	is.NoErr(err)
	w, err = c.UpdateWorkOrder(ctx, w.ID, fleet.WorkOrderPatch{Status: fleet.Optional[fleet.WorkOrderStatus]{Set: true, Value: "completed"}})
	is.NoErr(err)
	is.True(w.CompletedAt != nil)
	_, err = c.UpdateWorkOrder(ctx, w.ID, fleet.WorkOrderPatch{Status: fleet.Optional[fleet.WorkOrderStatus]{Set: true, Value: "open"}})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition) // completed is final
	got, err = c.Schedule(ctx, s.ID)
	is.NoErr(err)
	is.Equal(got.Status, fleet.ScheduleOK) // the completed work order recorded the service
	wo, err := c.WorkOrder(ctx, w.ID)
	is.NoErr(err)
	is.Equal(*wo.CostCents, int64(12_500))
	is.Equal(len(collect(t, c.WorkOrders(ctx, fleet.WorkOrderFilter{Status: "completed"}))), 1)
	is.NoErr(c.DeleteSchedule(ctx, s.ID))
	_, err = c.Schedule(ctx, s.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

func TestClientRateLimitWithoutWaiting(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, nk, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Tiny", Plan: fleet.PlanFree})
	is.NoErr(err)
	c := fleetclient.NewClient(e.srv.URL+"/v1", nk.Secret, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithoutRateLimitWait())
	for range 1000 {
		_, err := c.Account(ctx)
		is.NoErr(err)
	}
	_, err = c.Account(ctx)
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded) // returned at once, not waited out
}

// TestEveryClientMethodIsExercised: each exported method of Client is
// called by some test of this package against the real handler, so a new
// method without a test fails here.
func TestEveryClientMethodIsExercised(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	typ := reflect.TypeFor[*fleetclient.Client]()
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if !regexp.MustCompile(`\.` + name + `\(`).MatchString(src.String()) {
			t.Errorf("Client.%s is called by no test", name)
		}
	}
	is.New(t).True(typ.NumMethod() > 40) // the client covers the API
}

// losingTransport delivers every request, but loses the answer of the first
// lose of them, as a connection cut after the server acted does; it keeps
// the Idempotency-Key each request carried.
type losingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	lose int
	keys []string
}

func (l *losingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.keys = append(l.keys, req.Header.Get("Idempotency-Key"))
	lost := l.lose > 0
	l.lose--
	l.mu.Unlock()
	res, err := l.next.RoundTrip(req)
	if err != nil || !lost {
		return res, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return nil, errors.New("connection reset by peer")
}

// TestClientRetriesALostAnswerOnce: a POST whose answer is lost is sent
// again with the same Idempotency-Key, so the server acts once and the
// client gets the first answer; with retries off the error comes back.
func TestClientRetriesALostAnswerOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	ctx := context.Background()
	lt := &losingTransport{next: e.srv.Client().Transport, lose: 1}
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(&http.Client{Transport: lt}))
	v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Once"})
	is.NoErr(err)
	is.Equal(len(lt.keys), 2)        // sent twice
	is.True(lt.keys[0] != "")        // with an Idempotency-Key
	is.Equal(lt.keys[0], lt.keys[1]) // the same one both times
	vs := collect(t, fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client())).Vehicles(ctx, fleetclient.VehicleQuery{}))
	is.Equal(len(vs), 1) // created once
	is.Equal(vs[0].ID, v.ID)

	lt = &losingTransport{next: e.srv.Client().Transport, lose: 1}
	c = fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(&http.Client{Transport: lt}), fleetclient.WithMaxRetries(0))
	_, err = c.CreateVehicle(ctx, fleet.Vehicle{Name: "Lost"})
	is.True(err != nil)       // no retry: the loss is the caller's to see
	is.Equal(len(lt.keys), 1) // sent once
}

// The client keeps what the server says of an error: its code, message and
// details as a *fleet.Error, the HTTP status and the request id to quote.
func TestClientErrorsCarryStatusAndRequestID(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()))
	ctx := context.Background()

	_, err := c.Vehicle(ctx, "veh_nope")
	var apiErr *fleetclient.APIError
	is.True(errors.As(err, &apiErr))
	is.Equal(apiErr.StatusCode, http.StatusNotFound)
	is.True(strings.HasPrefix(apiErr.RequestID, "req_")) // the server's id for the request
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	is.True(strings.Contains(err.Error(), apiErr.RequestID)) // quoted in the message too

	_, err = c.CreateVehicle(ctx, fleet.Vehicle{Name: "x", VIN: "short"})
	var fe *fleet.Error
	is.True(errors.As(err, &fe))
	is.Equal(fe.Code, fleet.CodeValidation)
	is.Equal(fe.Details[0].Field, "vin")
	is.True(errors.As(err, &apiErr))
	is.Equal(apiErr.StatusCode, http.StatusUnprocessableEntity)
}

// unanswered is a client of an address where nothing listens, that does
// not retry.
func unanswered() *fleetclient.Client {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	return fleetclient.NewClient(url, "fleet_x", fleetclient.WithMaxRetries(0))
}

// A request that got no answer is a *TransportError wrapping its cause,
// read as unavailable, never as the server's internal_error.
func TestClientNetworkFailuresAreNotServerErrors(t *testing.T) {
	is := is.New(t)
	c := unanswered()
	_, err := c.Account(context.Background())
	var te *fleetclient.TransportError
	is.True(errors.As(err, &te))
	is.True(errors.Is(err, syscall.ECONNREFUSED))
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	var apiErr *fleetclient.APIError
	is.True(!errors.As(err, &apiErr)) // the API said nothing

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Account(ctx)
	is.True(errors.Is(err, context.Canceled))
	is.True(errors.As(err, &te))
}

// The unavailable *fleet.Error a TransportError carries is its own: a
// caller that changes it changes neither a later reading of the same error
// nor the next request's.
func TestTransportErrorsAreNotShared(t *testing.T) {
	is := is.New(t)
	c := unanswered()
	_, err := c.Account(context.Background())
	var fe *fleet.Error
	is.True(errors.As(err, &fe))
	is.Equal(fe.Code, fleet.CodeUnavailable)
	msg := fe.Message
	fe.Code, fe.Message, fe.Err = fleet.CodeInternal, "changed by a caller", errors.New("a cause a caller added")
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	is.Equal(fleet.ErrorMessage(err), msg)

	_, next := c.Account(context.Background())
	var n *fleet.Error
	is.True(errors.As(next, &n))
	is.True(n != fe)
	is.Equal(n.Code, fleet.CodeUnavailable)
	is.Equal(n.Message, msg)
	is.Equal(n.Err, nil)
}

// An answer that is not the API's JSON (a proxy's error page) keeps its
// status, and a gateway's failure reads as unavailable.
func TestClientAnswersThatAreNotTheAPIs(t *testing.T) {
	is := is.New(t)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>502 Bad Gateway</html>")
	}))
	defer proxy.Close()
	c := fleetclient.NewClient(proxy.URL, "fleet_x", fleetclient.WithMaxRetries(0))
	_, err := c.Account(context.Background())
	var apiErr *fleetclient.APIError
	is.True(errors.As(err, &apiErr))
	is.Equal(apiErr.StatusCode, http.StatusBadGateway)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
}
