package fleetweb

import (
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
)

type usersData struct {
	Users []fleet.User
	Roles []fleet.Role
	// Added is the sign-in link the page shows, once, after the redirect
	// of the form that made it; Gone says the page was that page, viewed
	// again.
	Added *addedUser
	Gone  bool
	Form  fleet.UserParams
}

// addedUser is a new person's one-time sign-in link, held for the page
// after the form's redirect.
type addedUser struct {
	User    fleet.User
	Link    string
	Expires string
}

func (h *Handler) usersPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	d := usersData{Form: fleet.UserParams{Role: fleet.RoleViewer}}
	if v, ok, had := h.takeShown(r); ok {
		if a, ok := v.(addedUser); ok {
			d.Added = &a
		}
	} else if had {
		d.Gone = true
	}
	h.showUsers(w, r, us, http.StatusOK, page{Title: "Users", Nav: "users", User: &us}, d)
}

func (h *Handler) showUsers(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d usersData) {
	users, err := h.svc.ListUsers(r.Context(), us)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d.Users, d.Roles = users, fleet.Roles()
	p.Data = d
	h.render(w, status, "users", p)
}

// addUser adds a person (admins only, as the use case decides) and
// redirects to the page that shows their one-time sign-in link, valid 24
// hours, once; no e-mail is sent.
func (h *Handler) addUser(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	params := fleet.UserParams{Email: r.PostFormValue("email"), Name: r.PostFormValue("name"), Role: fleet.Role(r.PostFormValue("role"))}
	p := page{Title: "Users", Nav: "users", User: &us}
	u, secret, err := h.svc.AddUser(r.Context(), us, params)
	if err != nil {
		errorPage(&p, err)
		h.showUsers(w, r, us, statusOf(err), p, usersData{Form: params})
		return
	}
	token := h.shownOnce(r, addedUser{User: u, Link: SignInLinkURL(h.baseURL(r), secret),
		Expires: h.svc.Now().Add(fleet.SignInLinkTTL).UTC().Format("2006-01-02 15:04 UTC")})
	http.Redirect(w, r, "/users?shown="+token, http.StatusSeeOther)
}

// SignInLinkURL returns the address of a one-time sign-in link on the
// dashboard at base (e.g. "https://fleet.example.com").
func SignInLinkURL(base, secret string) string {
	return base + "/welcome?token=" + url.QueryEscape(secret)
}

// baseURL is the dashboard's address: Options.PublicURL, or else as the
// browser reached it (by the request's Host and X-Forwarded-Proto).
func (h *Handler) baseURL(r *http.Request) string {
	if h.opts.PublicURL != "" {
		return h.opts.PublicURL
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
