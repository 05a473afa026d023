package fleethttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// panickyStore panics on listing keys, as a bug in a store might.
type panickyStore struct{ *memstore.Store }

func (s panickyStore) View(ctx context.Context, fn func(fleet.Tx) error) error {
	return s.Store.View(ctx, func(tx fleet.Tx) error { return fn(panickyTx{tx}) })
}

type panickyTx struct{ fleet.Tx }

func (panickyTx) Keys(string, fleet.Page) ([]fleet.Key, error) { panic("store bug") }

func TestPanicBecomesInternalError(t *testing.T) {
	is := is.New(t)
	e := newEnvOn(t, panickyStore{memstore.New()}, testclock.New(T0))
	_, key := e.account(fleet.PlanPro)
	r := e.do("GET", "/v1/api_keys", key, nil, "X-Request-Id", "trace-me")
	is.Equal(r.status, http.StatusInternalServerError) // an answer, not a dropped connection
	is.Equal(r.errCode(), "internal_error")
	is.Equal(r.json()["error"].(map[string]any)["request_id"], "trace-me")
	is.True(!strings.Contains(string(r.body), "store bug")) // no internals
	logs := e.logs.String()
	is.True(strings.Contains(logs, `"msg":"panic"`) && strings.Contains(logs, "trace-me")) // logged with the request id
	is.Equal(e.do("GET", "/v1/account", key, nil).status, http.StatusOK)                   // the server lives on
}
