package fleetweb

import (
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
)

type usersData struct {
	Users   []fleet.User
	Roles   []fleet.Role
	Added   *fleet.User
	Link    string
	Expires string
	Form    fleet.UserParams
}

func (h *Handler) usersPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	h.showUsers(w, r, us, http.StatusOK, page{Title: "Users", Nav: "users", User: &us}, usersData{Form: fleet.UserParams{Role: fleet.RoleViewer}})
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

// addUser adds a person (admins only, as the use case decides) and shows
// their one-time sign-in link, valid 24 hours; no e-mail is sent.
func (h *Handler) addUser(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	params := fleet.UserParams{Email: r.PostFormValue("email"), Name: r.PostFormValue("name"), Role: fleet.Role(r.PostFormValue("role"))}
	p := page{Title: "Users", Nav: "users", User: &us}
	u, secret, err := h.svc.AddUser(r.Context(), us, params)
	if err != nil {
		errorPage(&p, err)
		h.showUsers(w, r, us, statusOf(err), p, usersData{Form: params})
		return
	}
	h.showUsers(w, r, us, http.StatusCreated, p, usersData{Added: &u, Link: SignInLinkURL(h.baseURL(r), secret),
		Expires: h.svc.Now().Add(fleet.SignInLinkTTL).UTC().Format("2006-01-02 15:04 UTC"),
		Form:    fleet.UserParams{Role: fleet.RoleViewer}})
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
