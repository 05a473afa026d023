package fleetclient_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/internal/testlog"
	"github.com/fleetkit/fleetapi/memstore"
)

// The client's tests call the real handler over loopback: the package
// itself imports neither (TestClientLinksNoServerPackages), its tests may.

// T0 is when every test starts.
var T0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

var ctx = context.Background()

// env is the API served on loopback over a memstore, with a settable
// clock.
type env struct {
	t     *testing.T
	clock *testclock.Clock
	svc   *fleet.Service
	srv   *httptest.Server
	logs  *testlog.Buffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	keys, err := fleet.NewSecretKeys(bytes.Repeat([]byte{0x5e}, fleet.SecretKeyLen))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, clock: testclock.New(T0), logs: &testlog.Buffer{}}
	log := slog.New(slog.NewJSONHandler(e.logs, nil))
	e.svc = fleet.NewService(memstore.New(), fleet.Options{Now: e.clock.Now, Logger: log,
		Webhooks: fleet.WebhookOptions{Insecure: true, SecretKeys: keys}})
	e.srv = httptest.NewServer(fleethttp.NewHandler(e.svc, fleethttp.WithLogger(log)))
	t.Cleanup(e.srv.Close)
	return e
}

// account creates an account on plan and returns it with its first key.
func (e *env) account(plan fleet.Plan) (fleet.Account, string) {
	e.t.Helper()
	a, nk, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: plan})
	if err != nil {
		e.t.Fatalf("create account: %v", err)
	}
	return a, nk.Secret
}

// vehicle creates a vehicle named name and returns its id.
func vehicle(t *testing.T, c *fleetclient.Client, name string) string {
	t.Helper()
	v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: name})
	if err != nil {
		t.Fatalf("create vehicle: %v", err)
	}
	return v.ID
}

func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatalf("walk: %v", err)
		}
		out = append(out, v)
	}
	return out
}

func ptrF(f float64) *float64 { return &f }
