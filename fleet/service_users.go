package fleet

import (
	"context"
	"strings"
	"time"
)

// UserSession is a signed-in person: the user, their account and the
// session the browser holds.
type UserSession struct {
	User    User
	Account Account
	Session Session
}

// Principal returns the principal the person acts as on the account's use
// cases: the account with the permissions of the user's role (Role.Permissions).
// Key management from the dashboard thus runs the same use cases, caps and
// checks as the API; a viewer is refused every change as a read-only key is.
// The principal's key id is the user's id, which no API key shares.
func (u UserSession) Principal() Principal {
	return Principal{
		Key: Key{ID: u.User.ID, AccountID: u.Account.ID, Name: u.User.Email,
			Permissions: u.User.Role.Permissions(), Environment: "dashboard", CreatedAt: u.User.CreatedAt},
		Account: u.Account,
	}
}

// IsAdmin reports whether the person is an admin of the account.
func (u UserSession) IsAdmin() bool { return u.User.Role == RoleAdmin }

// Can reports whether the person's role holds the permission (a
// Permission of the contract, such as "vehicles:write"): the dashboard
// offers a control only to whom the use case behind it would allow.
func (u UserSession) Can(p Permission) bool { return u.User.Role.Permissions().Allows(p) }

func (u UserSession) requireAdmin() error {
	if u.IsAdmin() {
		return nil
	}
	return Errorf(CodeInsufficientPermissions, "Only an admin of the account can do this; your role is %s.", u.User.Role)
}

func errSignIn() *Error {
	return &Error{Code: CodeUnauthorized, Message: "The e-mail address or password is incorrect."}
}

func errNoSession() *Error { return &Error{Code: CodeUnauthorized, Message: "Please sign in."} }

// SignIn checks an e-mail address and password and starts a session,
// returning its secret (for the browser's cookie; only its hash is kept).
// An unknown address and a wrong password get the same error, after the
// same work. addr is the client address the attempt comes from.
//
// Each attempt counts before its password is checked: within LoginWindow,
// LoginFailures attempts for one e-mail address from one client address,
// and AddressLoginFailures from one client address whatever the e-mail
// addresses, may fail; beyond either, attempts from there are refused with
// rate_limit_exceeded (with a Retry-After) until the window has room, and
// a right one is taken back. Failures for an e-mail address from other
// addresses never refuse it: past LoginFailures of them, each attempt
// for it is slowed (see MaxLoginDelay), then judged. The password is
// checked in one of Options.MaxPasswordHashes slots; an attempt that
// finds none free within PasswordHashWait is answered unavailable, with a
// Retry-After, and not counted.
func (s *Service) SignIn(ctx context.Context, email, password, addr string) (UserSession, string, error) {
	now := s.Now()
	email = NormaliseEmail(email)
	addr = throttleAddr(addr)
	emailKey := keyOf("email", email)
	pairKey := keyOf("pair", email, addr)
	tk, wait := s.logins.admit(now, limit{keyOf("addr", addr), AddressLoginFailures}, limit{pairKey, LoginFailures})
	if wait > 0 {
		return UserSession{}, "", rateLimited("Too many failed sign-ins. Try again in %d minutes.", wait)
	}
	if d := loginDelay(s.logins.count(now, emailKey)); d > 0 {
		if err := s.opts.Sleep(ctx, d); err != nil {
			s.logins.cancel(tk)
			return UserSession{}, "", WithRetryAfter(Errorf(CodeUnavailable, "The sign-in was cut short. Try again."), d)
		}
	}
	var u User
	err := s.view(ctx, func(tx Tx) (err error) {
		u, err = tx.UserByEmail(email)
		return err
	})
	if err != nil && ErrorCode(err) != CodeNotFound {
		s.logins.cancel(tk)
		return UserSession{}, "", err
	}
	hash := u.PasswordHash
	if err != nil || hash == "" {
		hash = s.dummyHash()
	}
	ok, err := s.verifyPassword(ctx, hash, password)
	if err != nil {
		s.logins.cancel(tk) // not judged
		return UserSession{}, "", err
	}
	if !ok || u.PasswordHash == "" {
		s.logins.fail(now, emailKey)
		return UserSession{}, "", errSignIn()
	}
	// Right: this attempt was no failure, and the per-e-mail brake and this
	// pair's failures end (only who knows the password gets here).
	s.logins.cancel(tk)
	s.logins.forget(emailKey)
	s.logins.forget(pairKey)
	return s.startSession(ctx, u, now, false)
}

// startSession stores a new session for u (its last login set to now);
// with endOthers, every other session of u ends in the same transaction.
func (s *Service) startSession(ctx context.Context, u User, now time.Time, endOthers bool) (UserSession, string, error) {
	secret, hash := newToken()
	sess := Session{Hash: hash, UserID: u.ID, AccountID: u.AccountID, CreatedAt: now, LastSeenAt: now}
	var a Account
	err := s.update(ctx, func(tx Tx) (err error) {
		if endOthers {
			if _, err := tx.DeleteUserSessions(u.ID); err != nil {
				return err
			}
		}
		stored, err := tx.UserByID(u.ID)
		if err != nil {
			return err
		}
		stored.PasswordHash = u.PasswordHash
		stored.LastLoginAt = &now
		if err := tx.UpdateUser(stored); err != nil {
			return err
		}
		u = stored
		if a, err = tx.Account(u.AccountID); err != nil {
			return err
		}
		return tx.CreateSession(sess)
	})
	if err != nil {
		return UserSession{}, "", err
	}
	return UserSession{User: u, Account: a, Session: sess}, secret, nil
}

// sessionSecretLen is the length of a session or sign-in link secret.
const sessionSecretLen = 43

// Session returns the signed-in person whose browser holds secret, or
// unauthorized when it names no session or the session has ended (idle for
// SessionIdle, or older than SessionMaxAge). The user's role and account
// are read afresh, so a change takes effect on the next request.
func (s *Service) Session(ctx context.Context, secret string) (UserSession, error) {
	if len(secret) != sessionSecretLen {
		return UserSession{}, errNoSession()
	}
	now := s.Now()
	h := HashToken(secret)
	var us UserSession
	err := s.view(ctx, func(tx Tx) (err error) {
		if us.Session, err = tx.Session(h); err != nil {
			return err
		}
		if us.User, err = tx.UserByID(us.Session.UserID); err != nil {
			return err
		}
		us.Account, err = tx.Account(us.User.AccountID)
		return err
	})
	if ErrorCode(err) == CodeNotFound {
		return UserSession{}, errNoSession()
	}
	if err != nil {
		return UserSession{}, err
	}
	if us.Session.Expired(now) {
		return UserSession{}, errNoSession()
	}
	if now.Sub(us.Session.LastSeenAt) >= sessionTouchEvery {
		if err := s.update(ctx, func(tx Tx) error { return tx.TouchSession(h, now) }); err != nil {
			return UserSession{}, err
		}
		us.Session.LastSeenAt = now
	}
	return us, nil
}

// SignOut ends the session whose secret the browser holds, if any.
func (s *Service) SignOut(ctx context.Context, secret string) error {
	return s.update(ctx, func(tx Tx) error { return tx.DeleteSession(HashToken(secret)) })
}

// ChangePassword sets the person's password after checking the current one
// and ends every session of the user, returning the secret of a new one for
// the browser that asked. Wrong current passwords are throttled per user
// (LoginFailures within LoginWindow, then rate_limit_exceeded): a stolen
// session cannot guess at leisure.
func (s *Service) ChangePassword(ctx context.Context, us UserSession, current, next string) (UserSession, string, error) {
	now := s.Now()
	key := keyOf("password", us.User.ID)
	tk, wait := s.logins.admit(now, limit{key, LoginFailures})
	if wait > 0 {
		return UserSession{}, "", rateLimited("Too many failed attempts. Try again in %d minutes.", wait)
	}
	var u User
	if err := s.view(ctx, func(tx Tx) (err error) { u, err = tx.UserByID(us.User.ID); return err }); err != nil {
		s.logins.cancel(tk)
		return UserSession{}, "", err
	}
	ok, err := s.verifyPassword(ctx, u.PasswordHash, current)
	if err != nil {
		s.logins.cancel(tk)
		return UserSession{}, "", err
	}
	if !ok {
		var v Validator
		v.Add("current_password", "is not your current password")
		return UserSession{}, "", v.Err()
	}
	s.logins.cancel(tk)
	var v Validator
	checkPassword(&v, "new_password", next)
	if err := v.Err(); err != nil {
		return UserSession{}, "", err
	}
	if u.PasswordHash, err = s.hashPassword(ctx, next); err != nil {
		return UserSession{}, "", err
	}
	return s.startSession(ctx, u, now, true)
}

// ListUsers lists the people of the person's account, oldest first.
func (s *Service) ListUsers(ctx context.Context, us UserSession) ([]User, error) {
	var out []User
	err := s.view(ctx, func(tx Tx) error {
		p := Page{Limit: MaxPageLimit}
		for {
			page, err := tx.Users(us.Account.ID, p)
			if err != nil {
				return err
			}
			out = append(out, page...)
			if len(page) < p.Limit {
				return nil
			}
			p.After = page[len(page)-1].ID
		}
	})
	return out, err
}

// AddUser adds a person to the admin's account and returns the user with
// the secret of a one-time sign-in link valid for SignInLinkTTL, with which
// they set their password (no e-mail is sent). Only an admin may add users.
func (s *Service) AddUser(ctx context.Context, us UserSession, params UserParams) (User, string, error) {
	if err := us.requireAdmin(); err != nil {
		return User{}, "", err
	}
	return s.createUser(ctx, us.Account.ID, params, "")
}

// createUser stores a user of the account, with a password when one is
// given (checked), else with a sign-in link whose secret it returns.
func (s *Service) createUser(ctx context.Context, accountID string, params UserParams, password string) (User, string, error) {
	var v Validator
	params.validate(&v)
	if password != "" {
		checkPassword(&v, "password", password)
	}
	if err := v.Err(); err != nil {
		return User{}, "", err
	}
	now := s.Now()
	u := User{ID: NewID(PrefixUser), AccountID: accountID, Email: params.Email, Name: params.Name,
		Role: params.Role, CreatedAt: now}
	if password != "" {
		var err error
		if u.PasswordHash, err = s.hashPassword(ctx, password); err != nil {
			return User{}, "", err
		}
	}
	var secret string
	err := s.update(ctx, func(tx Tx) error {
		if _, err := tx.Account(accountID); err != nil {
			return err
		}
		if _, err := tx.UserByEmail(u.Email); err == nil {
			return Errorf(CodeConflict, "A user with the e-mail address %s exists.", u.Email)
		}
		if err := tx.CreateUser(u); err != nil {
			return err
		}
		if password == "" {
			var l SignInLink
			secret, l = newSignInLink(u, now)
			return tx.CreateSignInLink(l)
		}
		return nil
	})
	if ErrorCode(err) == CodeNotFound {
		return User{}, "", NotFound("account", accountID)
	}
	if err != nil {
		return User{}, "", err
	}
	return u, secret, nil
}

func newSignInLink(u User, now time.Time) (string, SignInLink) {
	secret, hash := newToken()
	return secret, SignInLink{Hash: hash, UserID: u.ID, AccountID: u.AccountID, CreatedAt: now, ExpiresAt: now.Add(SignInLinkTTL)}
}

func errBadLink() *Error {
	return &Error{Code: CodeUnauthorized, Message: "This sign-in link is not valid: it has expired or was used. Ask an admin for a new one."}
}

// SignInLinkUser returns the user a valid sign-in link is for, or
// unauthorized.
func (s *Service) SignInLinkUser(ctx context.Context, secret string) (User, error) {
	if len(secret) != sessionSecretLen {
		return User{}, errBadLink()
	}
	now := s.Now()
	var u User
	err := s.view(ctx, func(tx Tx) error {
		l, err := tx.SignInLink(HashToken(secret))
		if err != nil {
			return err
		}
		if !now.Before(l.ExpiresAt) {
			return errBadLink()
		}
		u, err = tx.UserByID(l.UserID)
		return err
	})
	if ErrorCode(err) == CodeNotFound {
		return User{}, errBadLink()
	}
	return u, err
}

// SignInWithLink uses a one-time sign-in link: it sets the user's password
// (checked as any), ends the user's other sessions and links, and starts a
// session. The link cannot be used again.
func (s *Service) SignInWithLink(ctx context.Context, secret, password string) (UserSession, string, error) {
	u, err := s.SignInLinkUser(ctx, secret)
	if err != nil {
		return UserSession{}, "", err
	}
	if err := CheckPassword("password", password); err != nil {
		return UserSession{}, "", err
	}
	if u.PasswordHash, err = s.hashPassword(ctx, password); err != nil {
		return UserSession{}, "", err
	}
	now := s.Now()
	// The link is deleted in a transaction of its own that must find it, so
	// that two uses racing cannot both succeed.
	err = s.update(ctx, func(tx Tx) error {
		if _, err := tx.SignInLink(HashToken(secret)); err != nil {
			return errBadLink()
		}
		_, err := tx.DeleteSignInLinks(u.ID)
		return err
	})
	if err != nil {
		return UserSession{}, "", err
	}
	return s.startSession(ctx, u, now, true)
}

// SignUpParams are what a person gives to open an account themselves.
type SignUpParams struct {
	CompanyName string
	Email       string
	Name        string
	Password    string
	// ClientAddr is the address the request came from: at most
	// LoginFailures sign-ups per address are allowed within LoginWindow.
	ClientAddr string
}

// SignUp opens a free account with its first admin and signs them in. The
// account has no API key yet: its admin makes the first in the dashboard.
// Whether people may sign up is the adapter's choice (fleetserver's
// --signup, off by default). Attempts are throttled per client address as
// failed sign-ins are (LoginFailures within LoginWindow).
func (s *Service) SignUp(ctx context.Context, p SignUpParams) (UserSession, string, error) {
	now := s.Now()
	// Every attempt counts, and is never taken back: accounts are not free
	// to make in bulk.
	if _, wait := s.logins.admit(now, limit{keyOf("signup", throttleAddr(p.ClientAddr)), LoginFailures}); wait > 0 {
		return UserSession{}, "", rateLimited("Too many sign-ups from this address. Try again in %d minutes.", wait)
	}
	a := Account{ID: NewID(PrefixAccount), CompanyName: strings.TrimSpace(p.CompanyName), Plan: PlanFree, CreatedAt: now}
	params := UserParams{Email: p.Email, Name: p.Name, Role: RoleAdmin}
	var v Validator
	if err := a.Validate(); err != nil {
		v.Add("company_name", "must be 1 to 200 characters")
	}
	params.validate(&v)
	checkPassword(&v, "password", p.Password)
	if err := v.Err(); err != nil {
		return UserSession{}, "", err
	}
	hash, err := s.hashPassword(ctx, p.Password)
	if err != nil {
		return UserSession{}, "", err
	}
	u := User{ID: NewID(PrefixUser), AccountID: a.ID, Email: params.Email, Name: params.Name, Role: RoleAdmin,
		CreatedAt: now, PasswordHash: hash}
	err = s.update(ctx, func(tx Tx) error {
		if _, err := tx.UserByEmail(u.Email); err == nil {
			return Errorf(CodeConflict, "A user with the e-mail address %s exists; sign in instead.", u.Email)
		}
		if err := tx.CreateAccount(a); err != nil {
			return err
		}
		return tx.CreateUser(u)
	})
	if err != nil {
		return UserSession{}, "", err
	}
	return s.startSession(ctx, u, now, false)
}

// CreateUser adds a person to an account by its id: with a password when
// one is given, else with a one-time sign-in link whose secret it returns
// (valid SignInLinkTTL).
func (o Operator) CreateUser(ctx context.Context, accountID string, params UserParams, password string) (User, string, error) {
	return o.s.createUser(ctx, accountID, params, password)
}

// UserByEmail returns the user with the e-mail address, of any account.
func (o Operator) UserByEmail(ctx context.Context, email string) (User, error) {
	var u User
	err := o.s.view(ctx, func(tx Tx) (err error) { u, err = tx.UserByEmail(NormaliseEmail(email)); return err })
	return u, err
}

// purgeSessions deletes ended sessions and expired sign-in links.
func (s *Service) purgeSessions(ctx context.Context, now time.Time) error {
	return s.update(ctx, func(tx Tx) error {
		if _, err := tx.PurgeSessions(now.Add(-SessionIdle), now.Add(-SessionMaxAge)); err != nil {
			return err
		}
		_, err := tx.PurgeSignInLinks(now)
		return err
	})
}

// SetPassword sets the password of the user with the e-mail address (the
// operator's reset: checked as any password) and ends every session of the
// user.
func (o Operator) SetPassword(ctx context.Context, email, password string) (User, error) {
	if err := CheckPassword("password", password); err != nil {
		return User{}, err
	}
	hash, err := o.s.hashPassword(ctx, password)
	if err != nil {
		return User{}, err
	}
	var u User
	err = o.s.update(ctx, func(tx Tx) (err error) {
		if u, err = tx.UserByEmail(NormaliseEmail(email)); err != nil {
			return err
		}
		u.PasswordHash = hash
		if err := tx.UpdateUser(u); err != nil {
			return err
		}
		_, err = tx.DeleteUserSessions(u.ID)
		return err
	})
	return u, err
}
