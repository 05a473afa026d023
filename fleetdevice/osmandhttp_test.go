package fleetdevice

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// fakeOsmAnd stands in for DecodeOsmAnd in the listener's tests: the
// query (or form body) id, lat, lon; or the JSON {"device_id","lat","lon"}.
// No id is not a request of the protocol.
func fakeOsmAnd(r OsmAndRequest, s *Session, m *Message) (bool, error) {
	m.Kind = KindPositions
	if strings.HasPrefix(r.ContentType, "application/json") {
		var v struct {
			DeviceID string  `json:"device_id"`
			Lat      float64 `json:"lat"`
			Lon      float64 `json:"lon"`
		}
		if json.Unmarshal(r.Body, &v) != nil || v.DeviceID == "" {
			return true, ErrGarbage
		}
		m.Identifier = v.DeviceID
		m.Positions = append(m.Positions, Position{Time: s.Now, Latitude: v.Lat, Longitude: v.Lon, Valid: true})
		return true, nil
	}
	q := r.RawQuery
	if q == "" {
		q = string(r.Body)
	}
	vals, err := url.ParseQuery(q)
	if err != nil || vals.Get("id") == "" {
		return false, ErrGarbage
	}
	lat, _ := strconv.ParseFloat(vals.Get("lat"), 64)
	lon, _ := strconv.ParseFloat(vals.Get("lon"), 64)
	m.Identifier = vals.Get("id")
	m.Positions = append(m.Positions, Position{Time: s.Now, Latitude: lat, Longitude: lon, Valid: true})
	return false, nil
}

// osmandRig serves the OsmAnd handler with fakeOsmAnd through
// ServeOsmAnd on loopback.
func osmandRig(t *testing.T, ing *fakeIngest, opts Options) (*rig, string) {
	t.Helper()
	r := newRig(t, ing, opts, lineProto{})
	r.s.decodeOsmAnd = fakeOsmAnd
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.s.ServeOsmAnd(ln) }()
	t.Cleanup(func() {
		r.s.Close()
		<-done
	})
	return r, "http://" + ln.Addr().String()
}

// Each outcome of an OsmAnd request has its status.
func TestOsmAndAnswers(t *testing.T) {
	for _, tc := range []struct {
		name        string
		method      string
		target      string
		ctype, body string
		err         error
		status      int
		retryAfter  string
	}{
		{name: "stored", method: "GET", target: "/?id=dev1&lat=48.1&lon=11.5", status: 200},
		{name: "stored, form", method: "POST", target: "/", ctype: "application/x-www-form-urlencoded", body: "id=dev1&lat=48.1&lon=11.5", status: 200},
		{name: "stored, JSON", method: "POST", target: "/", ctype: "application/json", body: `{"device_id":"dev1","lat":48.1,"lon":11.5}`, status: 200},
		{name: "unknown", method: "GET", target: "/?id=ghost&lat=1&lon=2", status: 400},
		{name: "unknown, form", method: "POST", target: "/", ctype: "application/x-www-form-urlencoded", body: "id=ghost&lat=1&lon=2", status: 400},
		{name: "unknown, JSON", method: "POST", target: "/", ctype: "application/json", body: `{"device_id":"ghost","lat":1,"lon":2}`, status: 404},
		{name: "not the protocol", method: "GET", target: "/?lat=1&lon=2", status: 400},
		{name: "not the protocol, JSON", method: "POST", target: "/", ctype: "application/json", body: `[1,2]`, status: 400},
		{name: "allowance", method: "GET", target: "/?id=dev1&lat=1&lon=2", err: fleet.Errorf(fleet.CodeRateLimitExceeded, "Points allowance spent."), status: 429, retryAfter: strconv.Itoa(AllowanceRetryAfter)},
		{name: "store", method: "GET", target: "/?id=dev1&lat=1&lon=2", err: fleet.Errorf(fleet.CodeUnavailable, "The store is busy."), status: 503, retryAfter: strconv.Itoa(UnavailableRetryAfter)},
		{name: "store, internal", method: "GET", target: "/?id=dev1&lat=1&lon=2", err: errors.New("disk on fire"), status: 503, retryAfter: strconv.Itoa(UnavailableRetryAfter)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ing := newFakeIngest("dev1")
			ing.setErr(tc.err)
			_, base := osmandRig(t, ing, Options{})
			req, err := http.NewRequest(tc.method, base+tc.target, strings.NewReader(tc.body))
			is.NoErr(err)
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			res, err := http.DefaultClient.Do(req)
			is.NoErr(err)
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			is.NoErr(err)
			is.Equal(res.StatusCode, tc.status)
			is.Equal(res.Header.Get("Retry-After"), tc.retryAfter)
			_, reports := ing.recorded()
			if tc.status == 200 {
				is.Equal(len(body), 0) // an empty body
				is.Equal(len(reports), 1)
				is.Equal(reports[0].Identifier, "dev1")
				is.Equal(reports[0].Protocol, "osmand")
				is.Equal(reports[0].Positions[0].Latitude, 48.1)
			} else {
				is.Equal(len(reports), 0)
			}
		})
	}
}

// A body over MaxOsmAndBody is refused; one of exactly that size is read.
func TestOsmAndBodyIsBounded(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	_, base := osmandRig(t, ing, Options{})
	form := "id=dev1&lat=1&lon=2&pad="
	full := form + strings.Repeat("x", DefaultMaxOsmAndBody-len(form))
	res, err := http.Post(base+"/", "application/x-www-form-urlencoded", strings.NewReader(full))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	res, err = http.Post(base+"/", "application/x-www-form-urlencoded", strings.NewReader(full+"x"))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 413)
}

// A body that does not come within FrameTimeout is cut: the request is
// answered 408 and the connection closed.
func TestOsmAndSlowBodyIsCut(t *testing.T) {
	is := is.New(t)
	_, base := osmandRig(t, newFakeIngest("dev1"), Options{FrameTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	is.NoErr(err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(testDeadline))
	send(t, c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nid=dev1")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	is.NoErr(err)
	is.Equal(res.StatusCode, 408)
	_, err = io.ReadAll(res.Body)
	is.NoErr(err) // the server closes the connection
}

// The real DecodeOsmAnd refuses what is not a request of the protocol
// (here: no device identifier) with 400.
func TestOsmAndWithoutIdentifier(t *testing.T) {
	is := is.New(t)
	s := NewServer(newFakeIngest("dev1"), Options{})
	rec := httptest.NewRecorder()
	s.OsmAnd().ServeHTTP(rec, httptest.NewRequest("GET", "/?timestamp=1377177267&lat=60.0&lon=30.0", nil))
	is.Equal(rec.Code, 400)
}

// OsmAnd's connections count towards the caps: one beyond is closed at
// once, without an answer.
func TestOsmAndConnectionsAreCapped(t *testing.T) {
	is := is.New(t)
	r, base := osmandRig(t, newFakeIngest("dev1"), Options{MaxConnsPerAddr: 1})
	addr := strings.TrimPrefix(base, "http://")
	first, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer first.Close()
	first.SetDeadline(time.Now().Add(testDeadline))
	send(t, first, "GET /?id=dev1&lat=1&lon=2 HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(first), nil)
	is.NoErr(err)
	is.Equal(res.StatusCode, 200) // kept alive
	second, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer second.Close()
	second.SetDeadline(time.Now().Add(testDeadline))
	expectClosed(t, second)
	is.Equal(r.s.Stats().Refused, int64(1))
}

// Shutdown ends ServeOsmAnd.
func TestOsmAndShutdown(t *testing.T) {
	is := is.New(t)
	s := NewServer(newFakeIngest(), Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	done := make(chan error, 1)
	go func() { done <- s.ServeOsmAnd(ln) }()
	// A request answered proves ServeOsmAnd is serving before Shutdown.
	res, err := http.Get("http://" + ln.Addr().String() + "/")
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 400)
	is.NoErr(s.Shutdown(context.Background()))
	is.Equal(<-done, ErrServerClosed)
}

// Through the listener: 400, and nothing reported.
func TestOsmAndListenerRefusesValuesGivenTwice(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("111", "222")
	r, base := osmandRig(t, ing, Options{})
	r.s.decodeOsmAnd = DecodeOsmAnd
	for _, target := range []string{"/?id=111&id=222&lat=1&lon=2", "/?id=222;id=111&lat=1&lon=2", "/?id=111&deviceid=222&lat=1&lon=2",
		"/?id=111&lat=1&lon=2&lat=3", "/?id=111&lat=1&lon=2&timestamp=1377177267&timestamp=1377177268"} {
		res, err := http.Get(base + target)
		is.NoErr(err)
		res.Body.Close()
		is.Equal(res.StatusCode, http.StatusBadRequest)
	}
	res, err := http.Post(base+"/", "application/json", strings.NewReader(`{"device_id":"111","device_id":"222","location":{"coords":{"latitude":1,"longitude":2}}}`))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusBadRequest)
	asked, reports := ing.recorded()
	is.Equal(len(asked), 0)
	is.Equal(len(reports), 0) // nothing stored
}
