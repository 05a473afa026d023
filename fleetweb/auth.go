package fleetweb

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
)

type signInData struct {
	Email string
	Next  string
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, err := h.session(r); err == nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	p := page{Title: "Sign in", Data: signInData{Next: safeNext(r.URL.Query().Get("next"))}}
	if r.URL.Query().Get("signed_out") != "" {
		p.Notice = "You are signed out."
	}
	h.render(w, http.StatusOK, "signin", p)
}

// toSignIn sends the other words for signing in (/login, /signin) to
// /sign-in, keeping where to go after.
func (h *Handler) toSignIn(w http.ResponseWriter, r *http.Request) {
	to := "/sign-in"
	if next := r.URL.Query().Get("next"); sitePath(next) {
		to += "?next=" + url.QueryEscape(next)
	}
	http.Redirect(w, r, to, http.StatusMovedPermanently)
}

// signIn checks the form and starts a new session. The browser's old
// session cookie, whatever it holds, is replaced by a fresh id (no session
// fixation); an old session of this browser is ended.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil { // too large, or malformed: no attempt
		h.badForm(w, r, err)
		return
	}
	email, password := r.PostFormValue("email"), r.PostFormValue("password")
	next := safeNext(r.PostFormValue("next"))
	_, secret, err := h.svc.SignIn(r.Context(), email, password, h.opts.ClientAddr(r))
	if err != nil {
		p := page{Title: "Sign in", Data: signInData{Email: email, Next: next}}
		errorPage(&p, err)
		p.Fields = nil
		if _, refused := fleet.RetryAfter(err); !refused && statusOf(err) >= 500 { // not a busy server's refusal
			h.log.Error("dashboard: sign in", "err", err)
		}
		setRetryAfter(w, err)
		h.render(w, statusOf(err), "signin", p)
		return
	}
	if old := h.sessionSecret(r); old != "" {
		h.svc.SignOut(r.Context(), old) // a session this browser had before
	}
	h.setSessionCookie(w, secret)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	if secret := h.sessionSecret(r); secret != "" {
		if err := h.svc.SignOut(r.Context(), secret); err != nil {
			h.fail(w, r, nil, err)
			return
		}
	}
	h.clearSessionCookie(w)
	http.Redirect(w, r, "/sign-in?signed_out=1", http.StatusSeeOther)
}

type signUpData struct {
	Company, Email, Name string
}

func (h *Handler) signUpPage(w http.ResponseWriter, r *http.Request) {
	if !h.opts.Signup {
		h.notFound(w, r)
		return
	}
	h.render(w, http.StatusOK, "signup", page{Title: "Sign up", Data: signUpData{}})
}

func (h *Handler) signUp(w http.ResponseWriter, r *http.Request) {
	if !h.opts.Signup {
		h.notFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		h.badForm(w, r, err)
		return
	}
	d := signUpData{Company: r.PostFormValue("company"), Email: r.PostFormValue("email"), Name: r.PostFormValue("name")}
	_, secret, err := h.svc.SignUp(r.Context(), fleet.SignUpParams{CompanyName: d.Company, Email: d.Email, Name: d.Name,
		Password: r.PostFormValue("password"), ClientAddr: h.opts.ClientAddr(r)})
	if err != nil {
		p := page{Title: "Sign up", Data: d}
		errorPage(&p, err)
		setRetryAfter(w, err)
		h.render(w, statusOf(err), "signup", p)
		return
	}
	h.setSessionCookie(w, secret)
	http.Redirect(w, r, "/settings/api-keys?welcome=1", http.StatusSeeOther)
}

type welcomeData struct {
	Token string
	User  fleet.User
}

// welcomePage is where a one-time sign-in link leads: the person sets a
// password and is signed in.
func (h *Handler) welcomePage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	u, err := h.svc.SignInLinkUser(r.Context(), token)
	if err != nil {
		p := page{Title: "Sign-in link"}
		errorPage(&p, err)
		h.render(w, statusOf(err), "error", p)
		return
	}
	h.render(w, http.StatusOK, "welcome", page{Title: "Set your password", Data: welcomeData{Token: token, User: u}})
}

func (h *Handler) welcome(w http.ResponseWriter, r *http.Request) {
	token := r.PostFormValue("token")
	_, secret, err := h.svc.SignInWithLink(r.Context(), token, r.PostFormValue("password"))
	if err != nil {
		u, uerr := h.svc.SignInLinkUser(r.Context(), token)
		p := page{Title: "Set your password", Data: welcomeData{Token: token, User: u}}
		errorPage(&p, err)
		name := "welcome"
		if uerr != nil {
			name = "error"
		}
		h.render(w, statusOf(err), name, p)
		return
	}
	if old := h.sessionSecret(r); old != "" {
		h.svc.SignOut(r.Context(), old)
	}
	h.setSessionCookie(w, secret)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (h *Handler) passwordPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Change password", Nav: "password", User: &us}
	if r.URL.Query().Get("changed") != "" {
		p.Notice = "Your password is changed. Every other session of yours has been signed out."
	}
	h.render(w, http.StatusOK, "password", p)
}

// changePassword sets a new password; every session of the person ends and
// this browser gets a new one.
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	_, secret, err := h.svc.ChangePassword(r.Context(), us, r.PostFormValue("current_password"), r.PostFormValue("new_password"))
	if err != nil {
		p := page{Title: "Change password", Nav: "password", User: &us}
		errorPage(&p, err)
		setRetryAfter(w, err)
		h.render(w, statusOf(err), "password", p)
		return
	}
	h.setSessionCookie(w, secret)
	http.Redirect(w, r, "/settings/password?changed=1", http.StatusSeeOther)
}

// badForm answers a form that could not be read: 413 when it is larger
// than MaxFormBytes, 400 otherwise.
func (h *Handler) badForm(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		h.renderError(w, r, http.StatusRequestEntityTooLarge, "The form is too large.")
		return
	}
	h.renderError(w, r, http.StatusBadRequest, "The form could not be read.")
}
