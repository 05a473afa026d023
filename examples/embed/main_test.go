package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/matryer/is"
)

// The example is a complete program: the API answers, /readyz says the
// store is reachable, webhooks are delivered, and on shutdown it stops
// cleanly with everything stored.
func TestEmbedIsComplete(t *testing.T) {
	is := is.New(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "embed.db")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, dsn, "127.0.0.1:0", true, pw); pw.Close() }()

	lines := bufio.NewScanner(pr)
	var base, key string
	for (base == "" || key == "") && lines.Scan() {
		if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
		if m := regexp.MustCompile(`Bearer (fleet_\w+)`).FindStringSubmatch(lines.Text()); m != nil {
			key = m[1]
		}
	}
	go io.Copy(io.Discard, pr)
	is.True(base != "" && key != "")

	res, err := http.Get(base + "/readyz")
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)

	// A request that announces a body and sends none does not hold its
	// connection, on the API or on the program's own routes.
	for _, path := range []string{"/v1/vehicles", "/"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		is.NoErr(err)
		_, err = io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n")
		is.NoErr(err)
		conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a guard against a hang only
		rd := bufio.NewReader(conn)
		res, err := http.ReadResponse(rd, nil)
		is.NoErr(err) // answered
		io.Copy(io.Discard, res.Body)
		_, err = rd.ReadByte()
		is.Equal(err, io.EOF) // and closed at once
		conn.Close()
	}

	got := make(chan fleet.Event, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e fleet.Event
		json.NewDecoder(r.Body).Decode(&e)
		got <- e
	}))
	defer rcv.Close()
	c := fleetclient.NewClient(base, key)
	_, err = c.CreateWebhook(ctx, fleetclient.WebhookParams{URL: rcv.URL + "/hooks", Events: []string{fleet.EventVehicleCreated}})
	is.NoErr(err)
	v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Van 1"})
	is.NoErr(err)
	select {
	case e := <-got:
		is.Equal(e.Type, fleet.EventVehicleCreated) // the sender runs
		is.True(strings.Contains(string(e.Data), v.ID))
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook delivery")
	}

	cancel()
	is.NoErr(<-done) // a clean stop
	store, err := fleetstore.Open(context.Background(), dsn)
	is.NoErr(err)
	defer store.Close()
	svc := fleet.NewService(store, fleet.Options{})
	p, err := svc.Authenticate(context.Background(), key)
	is.NoErr(err)
	_, err = svc.Vehicle(context.Background(), p, v.ID)
	is.NoErr(err) // what was acknowledged is stored
}
