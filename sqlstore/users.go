package sqlstore

import (
	"database/sql"
	"errors"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

const userColumns = `u.id, u.account_id, u.email, u.name, u.role, u.password_hash, u.created_at, u.last_login_at`

func scanUser(r scanner) (fleet.User, error) {
	var u fleet.User
	var role string
	var created int64
	var last sql.NullInt64
	if err := r.Scan(&u.ID, &u.AccountID, &u.Email, &u.Name, &role, &u.PasswordHash, &created, &last); err != nil {
		return fleet.User{}, err
	}
	u.Role, u.CreatedAt, u.LastLoginAt = fleet.Role(role), fromDB(created), fromNullDB(last)
	return u, nil
}

// CreateUser implements fleet.Tx.
func (t *tx) CreateUser(u fleet.User) error {
	err := t.insert(`INSERT INTO users (id, account_id, email, name, role, password_hash, created_at, last_login_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.AccountID, u.Email, u.Name, string(u.Role), u.PasswordHash, toDB(u.CreatedAt), toNullDB(u.LastLoginAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A user with this id or e-mail address exists.")
	case errForeignKey:
		return notFound(err, "account", u.AccountID)
	}
	return wrap(err, "create user")
}

func (t *tx) oneUser(where string, args ...any) (fleet.User, error) {
	u, err := scanUser(t.queryRow(`SELECT `+userColumns+` FROM users u WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.User{}, fleet.Errorf(fleet.CodeNotFound, "No such user.")
	}
	return u, wrap(t.failed(err), "read user")
}

// User implements fleet.Tx.
func (t *tx) User(accountID, id string) (fleet.User, error) {
	return t.oneUser(`u.id = ? AND u.account_id = ?`, id, accountID)
}

// UserByID implements fleet.Tx.
func (t *tx) UserByID(id string) (fleet.User, error) { return t.oneUser(`u.id = ?`, id) }

// UserByEmail implements fleet.Tx.
func (t *tx) UserByEmail(email string) (fleet.User, error) { return t.oneUser(`u.email = ?`, email) }

// Users implements fleet.Tx.
func (t *tx) Users(accountID string, p fleet.Page) ([]fleet.User, error) {
	out := []fleet.User{}
	if p.Limit <= 0 {
		return out, nil
	}
	rows, err := t.query(t.d.q(`SELECT `+userColumns+` FROM users u
		WHERE u.account_id = ? AND u.id > ? ORDER BY u.id LIMIT ?`), accountID, p.After, int64(p.Limit))
	if err != nil {
		return nil, wrap(t.failed(err), "list users")
	}
	defer rows.Close()
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, wrap(err, "list users")
		}
		out = append(out, u)
	}
	return out, wrap(t.failed(rows.Err()), "list users")
}

// UpdateUser implements fleet.Tx.
func (t *tx) UpdateUser(u fleet.User) error {
	n, err := t.update(`UPDATE users SET name = ?, role = ?, password_hash = ?, last_login_at = ?
		WHERE id = ? AND account_id = ?`,
		u.Name, string(u.Role), u.PasswordHash, toNullDB(u.LastLoginAt), u.ID, u.AccountID)
	if err != nil {
		return wrap(err, "update user")
	}
	if n == 0 {
		return fleet.NotFound("user", u.ID)
	}
	return nil
}

// DeleteUser implements fleet.Tx. Its sessions and sign-in links go with
// it (ON DELETE CASCADE, and deleted here first all the same).
func (t *tx) DeleteUser(accountID, id string) error {
	if _, err := t.update(`DELETE FROM user_sessions WHERE user_id = ? AND account_id = ?`, id, accountID); err != nil {
		return wrap(err, "delete user")
	}
	if _, err := t.update(`DELETE FROM sign_in_links WHERE user_id = ? AND account_id = ?`, id, accountID); err != nil {
		return wrap(err, "delete user")
	}
	if _, err := t.update(`DELETE FROM notification_rules WHERE user_id = ? AND account_id = ?`, id, accountID); err != nil {
		return wrap(err, "delete user")
	}
	if _, err := t.update(`DELETE FROM report_schedules WHERE user_id = ? AND account_id = ?`, id, accountID); err != nil {
		return wrap(err, "delete user")
	}
	n, err := t.update(`DELETE FROM users WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete user")
	}
	if n == 0 {
		return fleet.NotFound("user", id)
	}
	return nil
}

// CreateSession implements fleet.Tx.
func (t *tx) CreateSession(s fleet.Session) error {
	err := t.insert(`INSERT INTO user_sessions (hash, user_id, account_id, created_at, last_seen_at)
		VALUES (?, ?, ?, ?, ?)`, s.Hash[:], s.UserID, s.AccountID, toDB(s.CreatedAt), toDB(s.LastSeenAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A session with this secret exists.")
	case errForeignKey:
		return notFound(err, "user", s.UserID)
	}
	return wrap(err, "create session")
}

// Session implements fleet.Tx.
func (t *tx) Session(hash [32]byte) (fleet.Session, error) {
	var s fleet.Session
	var h []byte
	var created, seen int64
	err := t.queryRow(`SELECT hash, user_id, account_id, created_at, last_seen_at FROM user_sessions WHERE hash = ?`,
		hash[:]).Scan(&h, &s.UserID, &s.AccountID, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Session{}, fleet.Errorf(fleet.CodeNotFound, "No such session.")
	}
	if err != nil {
		return fleet.Session{}, wrap(t.failed(err), "read session")
	}
	s.Hash, err = hashFromDB(h)
	s.CreatedAt, s.LastSeenAt = fromDB(created), fromDB(seen)
	return s, err
}

// TouchSession implements fleet.Tx.
func (t *tx) TouchSession(hash [32]byte, at time.Time) error {
	_, err := t.update(`UPDATE user_sessions SET last_seen_at = ? WHERE hash = ?`, toDB(at), hash[:])
	return wrap(err, "touch session")
}

// DeleteSession implements fleet.Tx.
func (t *tx) DeleteSession(hash [32]byte) error {
	_, err := t.update(`DELETE FROM user_sessions WHERE hash = ?`, hash[:])
	return wrap(err, "delete session")
}

// DeleteUserSessions implements fleet.Tx.
func (t *tx) DeleteUserSessions(userID string) (int, error) {
	n, err := t.update(`DELETE FROM user_sessions WHERE user_id = ?`, userID)
	return int(n), wrap(err, "delete sessions")
}

// PurgeSessions implements fleet.Tx.
func (t *tx) PurgeSessions(idleBefore, createdBefore time.Time) (int, error) {
	n, err := t.update(`DELETE FROM user_sessions WHERE last_seen_at < ? OR created_at < ?`,
		toDB(idleBefore), toDB(createdBefore))
	return int(n), wrap(err, "purge sessions")
}

// CreateSignInLink implements fleet.Tx.
func (t *tx) CreateSignInLink(l fleet.SignInLink) error {
	err := t.insert(`INSERT INTO sign_in_links (hash, user_id, account_id, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`, l.Hash[:], l.UserID, l.AccountID, toDB(l.CreatedAt), toDB(l.ExpiresAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A sign-in link with this secret exists.")
	case errForeignKey:
		return notFound(err, "user", l.UserID)
	}
	return wrap(err, "create sign-in link")
}

// SignInLink implements fleet.Tx.
func (t *tx) SignInLink(hash [32]byte) (fleet.SignInLink, error) {
	var l fleet.SignInLink
	var h []byte
	var created, expires int64
	err := t.queryRow(`SELECT hash, user_id, account_id, created_at, expires_at FROM sign_in_links WHERE hash = ?`,
		hash[:]).Scan(&h, &l.UserID, &l.AccountID, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.SignInLink{}, fleet.Errorf(fleet.CodeNotFound, "No such sign-in link.")
	}
	if err != nil {
		return fleet.SignInLink{}, wrap(t.failed(err), "read sign-in link")
	}
	l.Hash, err = hashFromDB(h)
	l.CreatedAt, l.ExpiresAt = fromDB(created), fromDB(expires)
	return l, err
}

// DeleteSignInLinks implements fleet.Tx.
func (t *tx) DeleteSignInLinks(userID string) (int, error) {
	n, err := t.update(`DELETE FROM sign_in_links WHERE user_id = ?`, userID)
	return int(n), wrap(err, "delete sign-in links")
}

// PurgeSignInLinks implements fleet.Tx.
func (t *tx) PurgeSignInLinks(before time.Time) (int, error) {
	n, err := t.update(`DELETE FROM sign_in_links WHERE expires_at < ?`, toDB(before))
	return int(n), wrap(err, "purge sign-in links")
}
