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
	Me    string // the signed-in person's id
}

// addedUser is a person's one-time sign-in link, held for the page after
// the form's redirect: a new person's (Renewed false), or a new link for
// someone who forgot their password.
type addedUser struct {
	User    fleet.User
	Link    string
	Expires string
	Renewed bool
}

// removedUser is the notice after a person's removal, held for the page
// after the form's redirect.
type removedUser struct {
	Email string
}

func (h *Handler) usersPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	d := usersData{Form: fleet.UserParams{Role: fleet.RoleViewer}}
	p := page{Title: "Users", Nav: "users", User: &us}
	if v, ok, had := h.takeShown(r); ok {
		if a, ok := v.(addedUser); ok {
			d.Added = &a
		}
	} else if had {
		d.Gone = true
	}
	if v, ok := h.takeNotice(r); ok {
		if rm, ok := v.(removedUser); ok {
			p.Notice = rm.Email + " is removed: their sessions have ended and their sign-in links no longer work."
		}
	}
	h.showUsers(w, r, us, http.StatusOK, p, d)
}

func (h *Handler) showUsers(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d usersData) {
	users, err := h.svc.ListUsers(r.Context(), us)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d.Users, d.Roles, d.Me = users, fleet.Roles(), us.User.ID
	if id := r.URL.Query().Get("role_changed"); id != "" && p.Notice == "" && p.Error == "" {
		for _, u := range users {
			if u.ID == id {
				p.Notice = u.Email + " is now " + article(u.Role) + "."
			}
		}
	}
	p.Data = d
	h.render(w, status, "users", p)
}

func article(r fleet.Role) string {
	if r == fleet.RoleAdmin {
		return "an admin"
	}
	return "a " + string(r)
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
	h.showLink(w, r, u, secret, false)
}

// showLink keeps a sign-in link for the users page the redirect leads to,
// which shows it once.
func (h *Handler) showLink(w http.ResponseWriter, r *http.Request, u fleet.User, secret string, renewed bool) {
	token := h.shownOnce(r, addedUser{User: u, Link: SignInLinkURL(h.baseURL(r), secret), Renewed: renewed,
		Expires: h.svc.Now().Add(fleet.SignInLinkTTL).UTC().Format("2006-01-02 15:04 UTC")})
	http.Redirect(w, r, "/users?shown="+token, http.StatusSeeOther)
}

// refused shows the users page again with the error a use case refused a
// form with (nothing changed).
func (h *Handler) refusedUsers(w http.ResponseWriter, r *http.Request, us fleet.UserSession, err error) {
	if fleet.ErrorCode(err) == fleet.CodeNotFound {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: "Users", Nav: "users", User: &us}
	errorPage(&p, err)
	h.showUsers(w, r, us, statusOf(err), p, usersData{Form: fleet.UserParams{Role: fleet.RoleViewer}})
}

// setRole gives a person another role (admins only; the account's only
// admin stays one, as the use case decides).
func (h *Handler) setRole(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	u, err := h.svc.SetUserRole(r.Context(), us, r.PathValue("user_id"), fleet.Role(r.PostFormValue("role")))
	if err != nil {
		h.refusedUsers(w, r, us, err)
		return
	}
	http.Redirect(w, r, "/users?role_changed="+url.QueryEscape(u.ID), http.StatusSeeOther)
}

// newLink makes a new one-time sign-in link for a person who forgot their
// password, and redirects to the page that shows it once.
func (h *Handler) newLink(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	u, secret, err := h.svc.NewSignInLink(r.Context(), us, r.PathValue("user_id"))
	if err != nil {
		h.refusedUsers(w, r, us, err)
		return
	}
	h.showLink(w, r, u, secret, true)
}

type removeUserData struct {
	Person fleet.User
	Me     bool
}

// removeUserPage asks an admin to confirm a person's removal.
func (h *Handler) removeUserPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !us.IsAdmin() {
		h.fail(w, r, &us, fleet.Errorf(fleet.CodeInsufficientPermissions, "Only an admin of the account can remove people."))
		return
	}
	users, err := h.svc.ListUsers(r.Context(), us)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	id := r.PathValue("user_id")
	for _, u := range users {
		if u.ID == id {
			h.render(w, http.StatusOK, "removeuser", page{Title: "Remove " + u.Email, Nav: "users", User: &us,
				Data: removeUserData{Person: u, Me: u.ID == us.User.ID}})
			return
		}
	}
	h.fail(w, r, &us, fleet.NotFound("user", id))
}

// removeUser removes a person (admins only; not the account's only admin)
// and says so on the users page; an admin who removed themselves is
// signed out.
func (h *Handler) removeUser(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	u, err := h.svc.RemoveUser(r.Context(), us, r.PathValue("user_id"))
	if err != nil {
		h.refusedUsers(w, r, us, err)
		return
	}
	if u.ID == us.User.ID {
		h.clearSessionCookie(w)
		http.Redirect(w, r, "/sign-in?signed_out=1", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/users?notice="+h.noticeOnce(r, removedUser{Email: u.Email}), http.StatusSeeOther)
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
