package fleet_test

import (
	"context"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
)

// BenchmarkSessionCheck is what each dashboard request pays to know who is
// signed in (a read transaction; the session's last use is written at most
// once a minute). Compare with BenchmarkKeyCheck, an API request's key
// check on its hot path, run alongside:
//
//	go test ./fleet -run '^$' -bench 'SessionCheck|KeyCheck'
func BenchmarkSessionCheck(b *testing.B) {
	ctx := context.Background()
	svc, _, _ := userService(b)
	_, secret, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "1.2.3.4")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Session(ctx, secret); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyCheck is the baseline of BenchmarkSessionCheck: an API key's
// authentication, cached.
func BenchmarkKeyCheck(b *testing.B) {
	ctx := context.Background()
	svc, _, a := userService(b)
	nk, err := svc.Operator().CreateKey(ctx, a.ID, fleet.KeyParams{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Authenticate(ctx, nk.Secret); err != nil {
			b.Fatal(err)
		}
	}
}
