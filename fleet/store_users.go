package fleet

import "time"

// UserTx is the users area's part of a Tx: the people who sign in to the
// dashboard, their sessions and their one-time sign-in links. Sessions and
// links are found by the SHA-256 of their secret, never by the secret.
type UserTx interface {
	// CreateUser stores a new user. Returns conflict if the id or the
	// e-mail address exists (in any account), not_found if the account
	// does not.
	CreateUser(u User) error
	// User returns the account's user; not_found if it has no such user.
	User(accountID, id string) (User, error)
	// UserByID returns the user with the id, of whichever account.
	UserByID(id string) (User, error)
	// UserByEmail returns the user with the (normalised) e-mail address, of
	// whichever account; not_found if there is none.
	UserByEmail(email string) (User, error)
	// Users returns the account's users in id order, after p.After, at most
	// p.Limit of them.
	Users(accountID string, p Page) ([]User, error)
	// UpdateUser replaces the mutable fields of a stored user (name, role,
	// password hash, last login). Returns not_found if it is not stored.
	UpdateUser(u User) error
	// DeleteUser deletes the account's user, with their sessions and
	// sign-in links. Returns not_found if the account has no such user.
	DeleteUser(accountID, id string) error

	// CreateSession stores a session. Returns conflict if the hash exists.
	CreateSession(s Session) error
	// Session returns the session with the hash; not_found if none.
	Session(hash [32]byte) (Session, error)
	// TouchSession sets the session's LastSeenAt; nothing if none.
	TouchSession(hash [32]byte, at time.Time) error
	// DeleteSession deletes the session with the hash, if any.
	DeleteSession(hash [32]byte) error
	// DeleteUserSessions deletes every session of the user and returns how
	// many there were.
	DeleteUserSessions(userID string) (int, error)
	// PurgeSessions deletes the sessions last seen before idleBefore or
	// created before createdBefore.
	PurgeSessions(idleBefore, createdBefore time.Time) (int, error)

	// CreateSignInLink stores a link. Returns conflict if the hash exists.
	CreateSignInLink(l SignInLink) error
	// SignInLink returns the link with the hash; not_found if none.
	SignInLink(hash [32]byte) (SignInLink, error)
	// DeleteSignInLinks deletes every link of the user.
	DeleteSignInLinks(userID string) (int, error)
	// PurgeSignInLinks deletes the links that expired before before.
	PurgeSignInLinks(before time.Time) (int, error)
}
