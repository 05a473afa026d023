package fleet_test

import (
	"context"
	"errors"
	"go/ast"
	"go/token"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// Each refusal is a value of its own: a caller that changes the *Error it
// got (its message, cause, details, Retry-After) changes no later answer.
func TestRefusalsAreNotShared(t *testing.T) {
	ctx := context.Background()
	svc, _, _, _ := signInService(t, fleet.Options{MaxPasswordHashes: 1})
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Streams", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, nk.Secret)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := svc.CreateStreamToken(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Edge().RedeemStreamToken(ctx, tok.Token); err != nil {
		t.Fatal(err)
	}

	clock := testclock.New(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	noKeys := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now,
		Webhooks: fleet.WebhookOptions{Insecure: true, RequireSecretKeys: true}})
	pro := proAccount(t, noKeys)

	for _, c := range []struct {
		name   string
		code   string
		refuse func() error
	}{
		{"malformed key", fleet.CodeUnauthorized, func() error { _, err := svc.Authenticate(ctx, "fleet_nonsense"); return err }},
		{"unknown key", fleet.CodeUnauthorized, func() error { _, err := svc.Authenticate(ctx, fleet.NewSecret()); return err }},
		{"malformed stream token", fleet.CodeUnauthorized, func() error { _, err := svc.Edge().RedeemStreamToken(ctx, "nonsense"); return err }},
		{"used stream token", fleet.CodeUnauthorized, func() error { _, err := svc.Edge().RedeemStreamToken(ctx, tok.Token); return err }},
		{"wrong password", fleet.CodeUnauthorized, func() error {
			_, _, err := svc.SignIn(ctx, "ada@example.com", "not the password at all", "192.0.2.1")
			return err
		}},
		{"no session", fleet.CodeUnauthorized, func() error { _, err := svc.Session(ctx, "nonsense"); return err }},
		{"bad sign-in link", fleet.CodeUnauthorized, func() error { _, err := svc.SignInLinkUser(ctx, "nonsense"); return err }},
		{"no secret keys", fleet.CodeUnavailable, func() error {
			_, err := noKeys.CreateWebhook(ctx, pro, fleet.Webhook{URL: "http://127.0.0.1:9/a", Enabled: true})
			return err
		}},
		{"password hashes busy", fleet.CodeUnavailable, func() error { return whileHashing(t, svc) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			first := c.refuse()
			var e *fleet.Error
			is.True(errors.As(first, &e))
			is.Equal(e.Code, c.code)
			code, msg, text := e.Code, e.Message, first.Error()
			retry, hasRetry := fleet.RetryAfter(first)

			e.Code, e.Message = fleet.CodeInternal, "changed by a caller"
			e.Err = errors.New("a cause a caller added")
			e.Details = append(e.Details, fleet.FieldError{Field: "f", Message: "added"})
			e.RetryAfter = time.Hour

			next := c.refuse()
			var n *fleet.Error
			is.True(errors.As(next, &n))
			is.True(n != e) // a value of its own
			is.Equal(n.Code, code)
			is.Equal(n.Message, msg)
			is.Equal(n.Err, nil)
			is.Equal(len(n.Details), 0)
			is.Equal(n.RetryAfter, time.Duration(0))
			is.Equal(next.Error(), text)
			nextRetry, nextHasRetry := fleet.RetryAfter(next)
			is.Equal(nextRetry, retry)
			is.Equal(nextHasRetry, hasRetry)
		})
	}
}

// whileHashing returns the refusal of a sign-in made while svc's one
// password hash slot is held by another sign-in.
func whileHashing(t *testing.T, svc *fleet.Service) error {
	t.Helper()
	ctx := context.Background()
	started, release := make(chan int, 1), make(chan struct{})
	fleet.SetPasswordHashStarted(svc, func(int) {
		started <- 1
		<-release
	})
	fleet.SetPasswordHashWait(svc, 0)
	held := make(chan struct{})
	go func() {
		defer close(held)
		svc.SignIn(ctx, "ada@example.com", goodPassword, "192.0.2.10")
	}()
	<-started
	_, _, err := svc.SignIn(ctx, "ada@example.com", "not the password at all", "192.0.2.11")
	close(release)
	<-held
	fleet.SetPasswordHashStarted(svc, nil)
	fleet.SetPasswordHashWait(svc, time.Minute)
	return err
}

// TestNoSharedErrorValues parses the package's source and fails on a
// package variable that holds an *Error (&Error{...}, Errorf, NotFound):
// every caller that got it could change it for all the others. A refusal
// used in several places is a function that returns a new one.
func TestNoSharedErrorValues(t *testing.T) {
	fset, files := packageSource(t)
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if makesError(v) {
						t.Errorf("%s: %s is an *Error shared by every caller; make it a function that returns a new one",
							fset.Position(v.Pos()), vs.Names[i].Name)
					}
				}
			}
		}
	}
}

// makesError reports whether e is &Error{...}, or a call of Errorf or
// NotFound.
func makesError(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.UnaryExpr:
		if cl, ok := e.X.(*ast.CompositeLit); ok && e.Op == token.AND {
			id, ok := cl.Type.(*ast.Ident)
			return ok && id.Name == "Error"
		}
	case *ast.CallExpr:
		id, ok := e.Fun.(*ast.Ident)
		return ok && (id.Name == "Errorf" || id.Name == "NotFound")
	case *ast.ParenExpr:
		return makesError(e.X)
	}
	return false
}
