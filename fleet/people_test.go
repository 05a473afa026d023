package fleet_test

import (
	"context"
	"sync"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// adminSession signs in the admin userService made.
func adminSession(t *testing.T, svc *fleet.Service) fleet.UserSession {
	t.Helper()
	us, _, err := svc.SignIn(context.Background(), "ada@example.com", goodPassword, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	return us
}

// addPerson adds a person by an admin and returns them with their link.
func addPerson(t *testing.T, svc *fleet.Service, us fleet.UserSession, email string, role fleet.Role) (fleet.User, string) {
	t.Helper()
	u, link, err := svc.AddUser(context.Background(), us, fleet.UserParams{Email: email, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	return u, link
}

func roleOf(t *testing.T, svc *fleet.Service, email string) fleet.Role {
	t.Helper()
	u, err := svc.Operator().UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.Role
}

// An account keeps an admin: its only admin can be neither made a viewer
// nor removed, by an admin or by the operator; with a second admin, both
// can.
func TestTheOnlyAdminStays(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, _ := userService(t)
	ada := adminSession(t, svc)

	_, err := svc.SetUserRole(ctx, ada, ada.User.ID, fleet.RoleViewer)
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
	is.Equal(fleet.ErrorMessage(err), "ada@example.com is the account's only admin and cannot be made a viewer: make another person admin first.")
	_, err = svc.RemoveUser(ctx, ada, ada.User.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
	_, err = svc.Operator().RemoveUser(ctx, ada.User.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
	is.Equal(roleOf(t, svc, "ada@example.com"), fleet.RoleAdmin) // nothing changed

	// A viewer made admin: now Ada may step down, and then the other is
	// the only admin.
	bob, _ := addPerson(t, svc, ada, "bob@example.com", fleet.RoleViewer)
	u, err := svc.SetUserRole(ctx, ada, bob.ID, fleet.RoleAdmin)
	is.NoErr(err)
	is.Equal(u.Role, fleet.RoleAdmin)
	_, err = svc.SetUserRole(ctx, ada, ada.User.ID, fleet.RoleViewer)
	is.NoErr(err)
	is.Equal(roleOf(t, svc, "ada@example.com"), fleet.RoleViewer)
	_, err = svc.Operator().RemoveUser(ctx, bob.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // Bob is the only admin now

	// Ada's session reads her new role: she may manage no one.
	ada, err = svc.Session(ctx, sessionSecretOf(t, svc, "ada@example.com"))
	is.NoErr(err)
	_, err = svc.RemoveUser(ctx, ada, bob.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	gone, err := svc.Operator().RemoveUser(ctx, ada.User.ID) // a viewer may go
	is.NoErr(err)
	is.Equal(gone.Email, "ada@example.com")
}

// viewerSignedIn adds a viewer with the good password to the account,
// signs them in, and returns the session and its secret.
func viewerSignedIn(t *testing.T, svc *fleet.Service, accountID, email string) (fleet.UserSession, string) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := svc.Operator().CreateUser(ctx, accountID, fleet.UserParams{Email: email, Role: fleet.RoleViewer}, goodPassword); err != nil {
		t.Fatal(err)
	}
	secret := sessionSecretOf(t, svc, email)
	us, err := svc.Session(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return us, secret
}

// sessionSecretOf signs in with the good password and returns the session's secret.
func sessionSecretOf(t *testing.T, svc *fleet.Service, email string) string {
	t.Helper()
	_, secret, err := svc.SignIn(context.Background(), email, goodPassword, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// Two admins who make each other viewers at the same moment: one change
// wins, the other is refused, and the account keeps an admin.
func TestAdminsDemotingEachOtherKeepOne(t *testing.T) {
	ctx := context.Background()
	for range 20 {
		is := is.New(t)
		svc, _, _ := userService(t)
		ada := adminSession(t, svc)
		bob, _ := addPerson(t, svc, ada, "bob@example.com", fleet.RoleAdmin)
		bobSession := ada
		bobSession.User = bob
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() { defer wg.Done(); _, errs[0] = svc.SetUserRole(ctx, ada, bob.ID, fleet.RoleViewer) }()
		go func() { defer wg.Done(); _, errs[1] = svc.SetUserRole(ctx, bobSession, ada.User.ID, fleet.RoleViewer) }()
		wg.Wait()
		refused := 0
		for _, err := range errs {
			if err != nil {
				is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
				refused++
			}
		}
		is.Equal(refused, 1)
		admins := 0
		for _, email := range []string{"ada@example.com", "bob@example.com"} {
			if roleOf(t, svc, email) == fleet.RoleAdmin {
				admins++
			}
		}
		is.Equal(admins, 1)
	}
}

// Removing a person ends their sessions and their sign-in link at once,
// frees their e-mail address, and leaves the others alone.
func TestRemoveUserEndsEverything(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, a := userService(t)
	ada := adminSession(t, svc)
	cy, cySecret := viewerSignedIn(t, svc, a.ID, "cy@example.com")
	_, link, err := svc.NewSignInLink(ctx, ada, cy.User.ID)
	is.NoErr(err)

	gone, err := svc.RemoveUser(ctx, ada, cy.User.ID)
	is.NoErr(err)
	is.Equal(gone.ID, cy.User.ID)
	_, err = svc.Session(ctx, cySecret)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // signed out
	_, err = svc.SignInLinkUser(ctx, link)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // the link is dead
	_, _, err = svc.SignIn(ctx, "cy@example.com", goodPassword, "192.0.2.1")
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	_, err = svc.RemoveUser(ctx, ada, cy.User.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // once
	users, err := svc.ListUsers(ctx, ada)
	is.NoErr(err)
	is.Equal(len(users), 1)
	_, err = svc.Session(ctx, sessionSecretOf(t, svc, "ada@example.com"))
	is.NoErr(err)                                              // the admin is still signed in
	addPerson(t, svc, ada, "cy@example.com", fleet.RoleViewer) // and may add the address again
}

// Only an admin manages people, and only of their own account: a viewer
// is refused, another account's person is not found, and nothing changes.
func TestPeopleManagedByTheirAdminOnly(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, a := userService(t)
	ada := adminSession(t, svc)
	vic, _ := viewerSignedIn(t, svc, a.ID, "vic@example.com")
	b, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bravo"})
	is.NoErr(err)
	other, _, err := svc.Operator().CreateUser(ctx, b.ID, fleet.UserParams{Email: "bee@example.com", Role: fleet.RoleAdmin}, "")
	is.NoErr(err)

	_, err = svc.SetUserRole(ctx, vic, vic.User.ID, fleet.RoleAdmin)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, err = svc.RemoveUser(ctx, vic, ada.User.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	_, _, err = svc.NewSignInLink(ctx, vic, ada.User.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
	is.Equal(roleOf(t, svc, "vic@example.com"), fleet.RoleViewer)

	_, err = svc.SetUserRole(ctx, ada, other.ID, fleet.RoleViewer)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	_, err = svc.RemoveUser(ctx, ada, other.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	_, _, err = svc.NewSignInLink(ctx, ada, other.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	_, err = svc.RemoveUser(ctx, ada, "not-an-id")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	is.Equal(roleOf(t, svc, "bee@example.com"), fleet.RoleAdmin)

	_, err = svc.SetUserRole(ctx, ada, vic.User.ID, "owner")
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	is.Equal(roleOf(t, svc, "vic@example.com"), fleet.RoleViewer)
}

// A new sign-in link replaces the person's earlier one; their password and
// sessions hold until it is used, which sets a new password and ends their
// other sessions.
func TestNewSignInLinkForAForgottenPassword(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, clock, a := userService(t)
	ada := adminSession(t, svc)
	cy, before := viewerSignedIn(t, svc, a.ID, "cy@example.com")

	_, first, err := svc.NewSignInLink(ctx, ada, cy.User.ID)
	is.NoErr(err)
	u, second, err := svc.Operator().NewSignInLink(ctx, cy.User.ID)
	is.NoErr(err)
	is.Equal(u.Email, "cy@example.com")
	is.True(first != second)
	_, err = svc.SignInLinkUser(ctx, first)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // replaced
	_, err = svc.Session(ctx, before)
	is.NoErr(err) // not used yet: nothing else changed
	_, _, err = svc.SignIn(ctx, "cy@example.com", goodPassword, "192.0.2.1")
	is.NoErr(err)

	clock.Advance(fleet.SignInLinkTTL - 1)
	const fresh = "a-new-password-for-cy"
	_, _, err = svc.SignInWithLink(ctx, second, fresh)
	is.NoErr(err)
	_, err = svc.Session(ctx, before)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // every other session ended
	_, _, err = svc.SignIn(ctx, "cy@example.com", fresh, "192.0.2.1")
	is.NoErr(err)

	_, _, err = svc.Operator().NewSignInLink(ctx, "usr_missing")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

// The operator lists an account's people, oldest first, a page at a time.
func TestOperatorListsUsers(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, a := userService(t)
	ada := adminSession(t, svc)
	bob, _ := addPerson(t, svc, ada, "bob@example.com", fleet.RoleViewer)
	l, err := svc.Operator().Users(ctx, a.ID, fleet.ListQuery{Limit: 1})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)
	is.Equal(l.Items[0].Email, "ada@example.com")
	is.True(l.HasMore)
	l, err = svc.Operator().Users(ctx, a.ID, fleet.ListQuery{Limit: 1, Cursor: l.NextCursor})
	is.NoErr(err)
	is.Equal(l.Items[0].ID, bob.ID)
	is.True(!l.HasMore)
	_, err = svc.Operator().Users(ctx, "acc_missing", fleet.ListQuery{})
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}
