package fleetclient_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

// The client makes a stream token and the URL a browser opens with it:
// the URL alone, with no Authorization, opens the stream of the vehicles
// it names.
func TestClientCreateStreamToken(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key)
	tok, err := c.CreateStreamToken(ctx)
	is.NoErr(err)
	is.True(tok.ExpiresAt.Equal(T0.Add(fleet.StreamTokenTTL)))
	v := vehicle(t, c, "Truck")
	other := vehicle(t, c, "Van")
	url := c.StreamURL(tok.Token, v)
	is.True(strings.HasPrefix(url, e.srv.URL+"/v1/vehicles/locations/stream?"))

	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, url, nil)
	is.NoErr(err)
	res, err := e.srv.Client().Do(req)
	is.NoErr(err)
	defer res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	is.Equal(res.Header.Get("Content-Type"), "text/event-stream")
	for _, id := range []string{other, v} { // the other vehicle's report is not on this stream
		_, err = c.IngestLocations(ctx, id, []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: e.clock.Now(), Speed: ptrF(10)}})
		is.NoErr(err)
	}
	sc := bufio.NewScanner(res.Body)
	var data string
	for data == "" && sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			data = d
		}
	}
	is.True(strings.Contains(data, `"vehicle_id":"`+v+`"`)) // the first report on the stream is v's

	nk, err := c.CreateKey(ctx, fleet.KeyParams{Name: "limited", Permissions: []string{"vehicles:read"}})
	is.NoErr(err)
	_, err = fleetclient.NewClient(e.srv.URL, nk.Key).CreateStreamToken(ctx)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions) // needs locations:read
}

func TestClientStream(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()))
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := c.CreateVehicle(sctx, fleet.Vehicle{Name: "Live"})
	is.NoErr(err)
	got := make(chan fleetclient.LiveLocation, 10)
	go func() {
		for ll, err := range c.Stream(sctx, v.ID) {
			if err != nil {
				return
			}
			got <- ll
		}
	}()
	// Post until the stream (which may still be connecting) shows a report.
	now := e.clock.Now()
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		_, err := c.IngestLocations(sctx, v.ID, []fleet.Point{{Latitude: 1, Longitude: float64(i), Timestamp: now.Add(time.Duration(i) * time.Millisecond)}})
		is.NoErr(err)
		select {
		case ll := <-got:
			is.Equal(ll.VehicleID, v.ID)
			is.True(ll.ID != "")
			return
		case <-deadline:
			t.Fatal("no report on the stream")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
