package fleet_test

import (
	"bytes"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// Stored responses are sealed with the requesting secret's SealKey: the
// store holds no plain text, the same secret opens them, another does not,
// and a plain record stored before sealing still replays.
func TestIdempotentResponsesAreSealed(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p, err := svc.Authenticate(ctx, nk.Secret)
	is.NoErr(err)
	seal := fleet.SealKeyFor(nk.Secret)
	is.True(seal != fleet.SealKeyFor(fleet.NewSecret())) // each secret its own key
	var hash [32]byte
	body := []byte(`{"success":true,"data":{"key":"fleet_the_secret"}}`)

	prev, err := svc.Edge().BeginIdempotent(ctx, p, seal, "create-1", hash)
	is.NoErr(err)
	is.True(prev == nil) // a first request runs
	is.NoErr(svc.Edge().FinishIdempotent(ctx, p, seal, "create-1", 201, body))

	stored, found, err := svc.Store().BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: p.Key.ID, Key: "create-1", CreatedAt: svc.Now()})
	is.NoErr(err)
	is.True(found)
	is.True(!bytes.Contains(stored.Body, []byte("fleet_the_secret"))) // sealed at rest
	is.Equal(stored.Status, 201)

	prev, err = svc.Edge().BeginIdempotent(ctx, p, seal, "create-1", hash)
	is.NoErr(err)
	is.Equal(string(prev.Body), string(body)) // the same secret opens it
	_, err = svc.Edge().BeginIdempotent(ctx, p, fleet.SealKeyFor(fleet.NewSecret()), "create-1", hash)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInternal) // another does not

	// A response stored in plain text before responses were sealed.
	_, _, err = svc.Store().BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: p.Key.ID, Key: "old-1", CreatedAt: svc.Now()})
	is.NoErr(err)
	is.NoErr(svc.Store().FinishIdempotency(ctx, p.Key.ID, "old-1", 200, []byte(`{"success":true}`)))
	prev, err = svc.Edge().BeginIdempotent(ctx, p, seal, "old-1", hash)
	is.NoErr(err)
	is.Equal(string(prev.Body), `{"success":true}`)
}
