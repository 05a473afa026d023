package fleet_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetpass"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/internal/testpass"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

const goodPassword = "tawny-owl-rides-at-dawn"

// userService returns a service on a fresh memstore with a settable clock,
// an account and its admin; passwords are hashed cheaply (testpass).
func userService(t testing.TB) (*fleet.Service, *testclock.Clock, fleet.Account) {
	t.Helper()
	clock := testclock.New(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now, Passwords: testpass.Cheap()})
	a, _, err := svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Operator().CreateUser(context.Background(), a.ID, fleet.UserParams{Email: "Ada@Example.com", Role: fleet.RoleAdmin}, goodPassword); err != nil {
		t.Fatal(err)
	}
	return svc, clock, a
}

func TestPasswordRules(t *testing.T) {
	is := is.New(t)
	is.Equal(fleet.ErrorCode(fleet.CheckPassword("password", "short")), fleet.CodeValidation)
	is.Equal(fleet.ErrorCode(fleet.CheckPassword("password", "Password1234")), fleet.CodeValidation) // common, any case
	is.Equal(fleet.ErrorCode(fleet.CheckPassword("password", strings.Repeat("x", 257))), fleet.CodeValidation)
	is.NoErr(fleet.CheckPassword("password", goodPassword))

	// The hashing itself is tested in internal/password and fleetpass.
	h := fleet.HashPassword(goodPassword)
	is.True(strings.HasPrefix(h, "$pbkdf2-sha256$i=600000$")) // OWASP's iteration count
	is.True(fleet.VerifyPassword(h, goodPassword))
	is.True(!fleet.VerifyPassword(h, goodPassword+"x"))
}

// The service hashes with Options.Passwords. Without it, the default
// (PBKDF2) refuses an Argon2id hash, as fleetserver stores them, and the
// log says why and what to pass; with fleetpass.Argon2id the same person
// signs in.
func TestPasswordHasherIsInjected(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	store := memstore.New()
	withArgon := fleet.NewService(store, fleet.Options{Passwords: fleetpass.Argon2id()})
	a, _, err := withArgon.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme"})
	is.NoErr(err)
	u, _, err := withArgon.Operator().CreateUser(ctx, a.ID, fleet.UserParams{Email: "ada@example.com", Role: fleet.RoleAdmin}, goodPassword)
	is.NoErr(err)
	stored, err := withArgon.Operator().UserByEmail(ctx, u.Email)
	is.NoErr(err)
	is.True(strings.HasPrefix(stored.PasswordHash, "$argon2id$")) // made by the hasher given
	_, _, err = withArgon.SignIn(ctx, "ada@example.com", goodPassword, "192.0.2.1")
	is.NoErr(err)

	var logged bytes.Buffer
	byDefault := fleet.NewService(store, fleet.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	_, _, err = byDefault.SignIn(ctx, "ada@example.com", goodPassword, "192.0.2.2")
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // the default cannot read it
	is.True(strings.Contains(logged.String(), "this hash needs fleetpass.Argon2id: pass it in Options.Passwords"))
	is.True(!strings.Contains(logged.String(), stored.PasswordHash)) // the hash is not logged

	// A hasher of the program's own is what the service uses.
	own := &countingHasher{PasswordHasher: testpass.Cheap()}
	svc := fleet.NewService(store, fleet.Options{Passwords: own})
	_, err = svc.Operator().SetPassword(ctx, "ada@example.com", goodPassword+"!")
	is.NoErr(err)
	_, _, err = svc.SignIn(ctx, "ada@example.com", goodPassword+"!", "192.0.2.3")
	is.NoErr(err)
	is.Equal(own.hashed.Load(), int64(1))
	is.Equal(own.verified.Load(), int64(1))
}

// countingHasher counts the calls to the hasher it wraps.
type countingHasher struct {
	fleet.PasswordHasher
	hashed, verified atomic.Int64
}

func (h *countingHasher) Hash(plain string) string {
	h.hashed.Add(1)
	return h.PasswordHasher.Hash(plain)
}

func (h *countingHasher) Verify(hash, plain string) bool {
	h.verified.Add(1)
	return h.PasswordHasher.Verify(hash, plain)
}

func TestSignInSameErrorAndSession(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, clock, a := userService(t)
	_, _, errWrong := svc.SignIn(ctx, "ada@example.com", "wrong password here", "1.2.3.4")
	_, _, errUnknown := svc.SignIn(ctx, "nobody@example.com", goodPassword, "1.2.3.4")
	is.Equal(fleet.ErrorCode(errWrong), fleet.CodeUnauthorized)
	is.Equal(errWrong.Error(), errUnknown.Error()) // no hint whether the address exists

	us, secret, err := svc.SignIn(ctx, " ADA@example.com ", goodPassword, "1.2.3.4")
	is.NoErr(err)
	is.Equal(us.Account.ID, a.ID)
	is.True(us.User.LastLoginAt != nil)
	got, err := svc.Session(ctx, secret)
	is.NoErr(err)
	is.Equal(got.User.ID, us.User.ID)

	// Idle expiry: used within 12 h it lives on; 12 h unused ends it.
	clock.Advance(11 * time.Hour)
	_, err = svc.Session(ctx, secret)
	is.NoErr(err)
	clock.Advance(12 * time.Hour)
	_, err = svc.Session(ctx, secret)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)

	// Absolute expiry: 7 days however often it is used.
	_, secret, err = svc.SignIn(ctx, "ada@example.com", goodPassword, "1.2.3.4")
	is.NoErr(err)
	for range 20 {
		clock.Advance(11 * time.Hour)
		if _, err = svc.Session(ctx, secret); err != nil {
			break
		}
	}
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)

	is.NoErr(svc.SignOut(ctx, secret))
	_, err = svc.Session(ctx, "not-a-session")
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
}

func TestRolesActThroughTheKeyUseCases(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, a := userService(t)
	admin, _, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "1.2.3.4")
	is.NoErr(err)
	nk, err := svc.CreateKey(ctx, admin.Principal(), fleet.KeyParams{Name: "Dashboard key", Environment: "development",
		Permissions: []fleet.Permission{fleet.PermVehiclesRead}})
	is.NoErr(err)
	is.Equal(nk.Key.AccountID, a.ID)

	_, link, err := svc.AddUser(ctx, admin, fleet.UserParams{Email: "viv@example.com", Role: fleet.RoleViewer})
	is.NoErr(err)
	is.True(link != "")
	viewer, _, err := svc.SignInWithLink(ctx, link, goodPassword+"!")
	is.NoErr(err)
	_, _, err = svc.SignInWithLink(ctx, link, goodPassword+"?")
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // a link works once

	_, err = svc.CreateKey(ctx, viewer.Principal(), fleet.KeyParams{Name: "nope"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, err = svc.RevokeKey(ctx, viewer.Principal(), nk.Key.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, _, err = svc.AddUser(ctx, viewer, fleet.UserParams{Email: "eve@example.com", Role: fleet.RoleAdmin})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	keys, err := svc.ListKeys(ctx, viewer.Principal(), fleet.ListQuery{})
	is.NoErr(err) // a viewer sees everything
	is.Equal(len(keys.Items), 2)

	users, err := svc.ListUsers(ctx, viewer)
	is.NoErr(err)
	is.Equal(len(users), 2)
	_, _, err = svc.AddUser(ctx, admin, fleet.UserParams{Email: "VIV@example.com"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
}

func TestChangePasswordEndsEverySession(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, _ := userService(t)
	us, s1, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "1.2.3.4")
	is.NoErr(err)
	_, s2, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "5.6.7.8")
	is.NoErr(err)
	_, _, err = svc.ChangePassword(ctx, us, "not my password", "a-brand-new-passphrase")
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	_, _, err = svc.ChangePassword(ctx, us, goodPassword, "password1234")
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	_, s3, err := svc.ChangePassword(ctx, us, goodPassword, "a-brand-new-passphrase")
	is.NoErr(err)
	for _, old := range []string{s1, s2} {
		_, err = svc.Session(ctx, old)
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	}
	_, err = svc.Session(ctx, s3)
	is.NoErr(err)
	_, _, err = svc.SignIn(ctx, "ada@example.com", "a-brand-new-passphrase", "1.2.3.4")
	is.NoErr(err)
}

func TestSignUpOpensFreeAccount(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, _ := userService(t)
	us, secret, err := svc.SignUp(ctx, fleet.SignUpParams{CompanyName: "Newco", Email: "new@example.com", Password: goodPassword})
	is.NoErr(err)
	is.True(secret != "")
	is.Equal(us.Account.Plan, fleet.PlanFree)
	is.Equal(us.User.Role, fleet.RoleAdmin)
	_, _, err = svc.SignUp(ctx, fleet.SignUpParams{CompanyName: "Other", Email: "ada@example.com", Password: goodPassword})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
	_, _, err = svc.SignUp(ctx, fleet.SignUpParams{CompanyName: "", Email: "bad", Password: "short"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
}

func TestSignUpThrottledPerAddress(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, clock, _ := userService(t)
	for i := range fleet.LoginFailures {
		_, _, err := svc.SignUp(ctx, fleet.SignUpParams{CompanyName: "Co", Email: "u" + string(rune('a'+i)) + "@example.com",
			Password: goodPassword, ClientAddr: "203.0.113.9"})
		is.NoErr(err)
	}
	_, _, err := svc.SignUp(ctx, fleet.SignUpParams{CompanyName: "Co", Email: "more@example.com", Password: goodPassword, ClientAddr: "203.0.113.9"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	_, _, err = svc.SignUp(ctx, fleet.SignUpParams{CompanyName: "Co", Email: "more@example.com", Password: goodPassword, ClientAddr: "203.0.113.10"})
	is.NoErr(err) // another address
	clock.Advance(fleet.LoginWindow)
	_, _, err = svc.SignUp(ctx, fleet.SignUpParams{CompanyName: "Co", Email: "later@example.com", Password: goodPassword, ClientAddr: "203.0.113.9"})
	is.NoErr(err)
}

// A manager runs the fleet through the same use cases as a key: vehicles,
// devices, drivers, alerts and maintenance change; API keys, webhooks and
// people do not, though the manager sees them.
func TestManagerRunsTheFleet(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, _ := userService(t)
	admin, _, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "1.2.3.4")
	is.NoErr(err)
	_, link, err := svc.AddUser(ctx, admin, fleet.UserParams{Email: "max@example.com", Role: fleet.RoleManager})
	is.NoErr(err)
	m, _, err := svc.SignInWithLink(ctx, link, goodPassword+"!")
	is.NoErr(err)
	is.True(!m.IsAdmin())
	is.True(m.Can(fleet.PermVehiclesWrite))
	is.True(!m.Can(fleet.PermKeysWrite))
	is.True(m.Can(fleet.PermKeysRead))

	v, err := svc.CreateVehicle(ctx, m.Principal(), fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	_, err = svc.CreateDevice(ctx, m.Principal(), fleet.Device{Identifier: "356307042441013", VehicleID: v.ID})
	is.NoErr(err)
	_, err = svc.CreateDriver(ctx, m.Principal(), fleet.Driver{Name: "Ana Lima"})
	is.NoErr(err)
	_, err = svc.CreateWorkOrder(ctx, m.Principal(), fleet.WorkOrder{VehicleID: v.ID, Title: "Brakes"})
	is.NoErr(err)

	_, err = svc.CreateKey(ctx, m.Principal(), fleet.KeyParams{Name: "nope"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, err = svc.CreateWebhook(ctx, m.Principal(), fleet.Webhook{URL: "https://hooks.example.com/x"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, _, err = svc.AddUser(ctx, m, fleet.UserParams{Email: "eve@example.com", Role: fleet.RoleAdmin})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, err = svc.SetUserRole(ctx, m, m.User.ID, fleet.RoleAdmin)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, err = svc.ListKeys(ctx, m.Principal(), fleet.ListQuery{})
	is.NoErr(err)

	// The role is chosen like the others, and named in the mistake.
	_, _, err = svc.AddUser(ctx, admin, fleet.UserParams{Email: "x@example.com", Role: "boss"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	is.True(strings.Contains(err.Error(), "admin, manager or viewer"))
}
