package fleetweb_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

var linkRE = regexp.MustCompile(`https://[^"]+/welcome\?token=([A-Za-z0-9_-]{43})`)

func (e *env) user(t *testing.T, email string) fleet.User {
	t.Helper()
	u, err := e.svc.Operator().UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// An admin changes a person's role, makes a new sign-in link for someone
// who forgot their password (shown once, the old one dead), and removes a
// person after a confirmation (their session ends); the account's only
// admin stays one, and the page says why.
func TestAdminManagesPeople(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	admin := e.signedIn(t, "admin@acme.test", adminPassword)
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	vic := e.user(t, "viewer@acme.test")
	ada := e.user(t, "admin@acme.test")

	r := do(t, admin, "GET", e.srv.URL+"/users", nil)
	is.True(strings.Contains(r.body, `action="/users/`+vic.ID+`/role"`))
	is.True(strings.Contains(r.body, `<label for="role-`+vic.ID+`">Role<span class="visually-hidden"> of viewer@acme.test</span></label>`))
	is.True(strings.Contains(r.body, `href="/users/`+vic.ID+`/remove"`))

	// The only admin: made a viewer, or removed, is refused with why.
	r = do(t, admin, "POST", e.srv.URL+"/users/"+ada.ID+"/role", url.Values{"role": {"viewer"}})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.body, "admin@acme.test is the account&#39;s only admin and cannot be made a viewer: make another person admin first."))
	r = do(t, admin, "POST", e.srv.URL+"/users/"+ada.ID+"/remove", url.Values{})
	is.Equal(r.status, http.StatusConflict)
	is.Equal(e.user(t, "admin@acme.test").Role, fleet.RoleAdmin)

	// A role changed, and said so after the redirect.
	r = do(t, admin, "POST", e.srv.URL+"/users/"+vic.ID+"/role", url.Values{"role": {"admin"}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "viewer@acme.test is now an admin."))
	is.Equal(e.user(t, "viewer@acme.test").Role, fleet.RoleAdmin)
	r = do(t, admin, "POST", e.srv.URL+"/users/"+vic.ID+"/role", url.Values{"role": {"owner"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "Role must be admin, manager or viewer."))
	r = do(t, admin, "POST", e.srv.URL+"/users/"+vic.ID+"/role", url.Values{"role": {"viewer"}})
	is.Equal(r.status, http.StatusSeeOther)

	// A new sign-in link: shown once after the redirect; it replaces the
	// person's earlier one, and it signs in once.
	first := do(t, admin, "POST", e.srv.URL+"/users/"+vic.ID+"/link", url.Values{})
	is.Equal(first.status, http.StatusSeeOther)
	firstPage := do(t, admin, "GET", e.srv.URL+first.header.Get("Location"), nil)
	firstToken := linkRE.FindStringSubmatch(firstPage.body)
	is.True(firstToken != nil)
	is.True(strings.Contains(firstPage.body, "New sign-in link for viewer@acme.test"))
	r = do(t, admin, "POST", e.srv.URL+"/users/"+vic.ID+"/link", url.Values{})
	shown := r.header.Get("Location")
	r = do(t, admin, "GET", e.srv.URL+shown, nil)
	token := linkRE.FindStringSubmatch(r.body)
	is.True(token != nil && token[1] != firstToken[1])
	r = do(t, admin, "GET", e.srv.URL+shown, nil)
	is.True(linkRE.FindString(r.body) == "") // once
	is.True(strings.Contains(r.body, "shown once"))
	is.Equal(do(t, e.client(t), "GET", e.srv.URL+"/welcome?token="+firstToken[1], nil).status, http.StatusUnauthorized)
	is.Equal(do(t, viewer, "GET", e.srv.URL+"/", nil).status, http.StatusOK) // her session holds until the link is used
	nc := e.client(t)
	r = do(t, nc, "POST", e.srv.URL+"/welcome", url.Values{"token": {token[1]}, "password": {"vics-new-passphrase"}})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(do(t, viewer, "GET", e.srv.URL+"/", nil).status, http.StatusSeeOther) // now signed out elsewhere

	// Removal: a confirmation, then the person is gone and signed out.
	r = do(t, admin, "GET", e.srv.URL+"/users/"+vic.ID+"/remove", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Remove viewer@acme.test</button>"))
	is.Equal(e.user(t, "viewer@acme.test").ID, vic.ID) // asking removes no one
	r = do(t, admin, "POST", e.srv.URL+"/users/"+vic.ID+"/remove", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "viewer@acme.test is removed: their sessions have ended"))
	is.True(!strings.Contains(r.body, `id="user-`+vic.ID+`"`))
	is.Equal(do(t, nc, "GET", e.srv.URL+"/", nil).status, http.StatusSeeOther) // her new session ended too
	_, err := e.svc.Operator().UserByEmail(context.Background(), "viewer@acme.test")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	is.Equal(do(t, admin, "POST", e.srv.URL+"/users/"+vic.ID+"/remove", url.Values{}).status, http.StatusNotFound)
}

// A viewer sees the people and is offered no way to change them, and every
// change forged from the viewer's browser is refused; another account's
// admin finds no one of this account.
func TestPeopleChangedByTheirAdminsOnly(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	ada := e.user(t, "admin@acme.test")
	r := do(t, viewer, "GET", e.srv.URL+"/users", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "admin@acme.test"))
	for _, offered := range []string{"/role\"", "/link\"", "/remove\"", `action="/users"`, "Change role", "New sign-in link", "Remove…"} {
		if strings.Contains(r.body, offered) {
			t.Errorf("a viewer is offered %s", offered)
		}
	}
	is.Equal(do(t, viewer, "GET", e.srv.URL+"/users/"+ada.ID+"/remove", nil).status, http.StatusForbidden)
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/users/" + ada.ID + "/role", url.Values{"role": {"viewer"}}},
		{"/users/" + ada.ID + "/link", url.Values{}},
		{"/users/" + ada.ID + "/remove", url.Values{}},
	} {
		r := do(t, viewer, "POST", e.srv.URL+post.path, post.form)
		is.Equal(r.status, http.StatusForbidden)
		is.True(strings.Contains(r.body, "Your role is viewer"))
		is.True(linkRE.FindString(r.body) == "")
	}
	is.Equal(e.user(t, "admin@acme.test").Role, fleet.RoleAdmin)

	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	is.Equal(do(t, other, "GET", e.srv.URL+"/users/"+ada.ID+"/remove", nil).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", e.srv.URL+"/users/"+ada.ID+"/remove", url.Values{}).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", e.srv.URL+"/users/"+ada.ID+"/link", url.Values{}).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", e.srv.URL+"/users/"+ada.ID+"/role", url.Values{"role": {"viewer"}}).status, http.StatusNotFound)
	is.Equal(e.user(t, "admin@acme.test").Role, fleet.RoleAdmin)
}

// The sign-in page says what to do when you forgot your password.
func TestSignInSaysWhatToDoWhenYouForgot(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	r := do(t, e.client(t), "GET", e.srv.URL+"/sign-in", nil)
	is.True(strings.Contains(r.body, "Forgot your password?"))
	is.True(strings.Contains(r.body, "Ask an admin of your account for a new sign-in link"))
}
