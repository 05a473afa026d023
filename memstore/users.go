package memstore

import (
	"slices"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// userTables hold the users area.
type userTables struct {
	users    *table[fleet.User]
	byEmail  map[string]string // e-mail -> user id
	sessions map[[32]byte]fleet.Session
	links    map[[32]byte]fleet.SignInLink
}

func newUserTables() userTables {
	return userTables{
		users: newTable("user", func(u fleet.User) string { return u.ID },
			func(u fleet.User) string { return u.AccountID }, cloneUser),
		byEmail:  map[string]string{},
		sessions: map[[32]byte]fleet.Session{},
		links:    map[[32]byte]fleet.SignInLink{},
	}
}

func cloneUser(u fleet.User) fleet.User {
	u.LastLoginAt = clonePtr(u.LastLoginAt)
	return u
}

func (t *tx) CreateUser(u fleet.User) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, ok := t.s.us.byEmail[u.Email]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A user with the e-mail address %s exists.", u.Email)
	}
	if _, err := t.s.accounts.get("", u.AccountID); err != nil {
		return err
	}
	if err := t.s.us.users.insert(t.txn, u); err != nil {
		return err
	}
	t.s.us.byEmail[u.Email] = u.ID
	t.undo(func() { delete(t.s.us.byEmail, u.Email) })
	return nil
}

func (t *tx) User(accountID, id string) (fleet.User, error) { return t.s.us.users.get(accountID, id) }

func (t *tx) UserByID(id string) (fleet.User, error) { return t.s.us.users.get("", id) }

func (t *tx) UserByEmail(email string) (fleet.User, error) {
	id, ok := t.s.us.byEmail[email]
	if !ok {
		return fleet.User{}, fleet.Errorf(fleet.CodeNotFound, "No user with this e-mail address.")
	}
	return t.s.us.users.get("", id)
}

func (t *tx) Users(accountID string, p fleet.Page) ([]fleet.User, error) {
	return t.s.us.users.list(accountID, p, nil), nil
}

func (t *tx) UpdateUser(u fleet.User) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.us.users.get(u.AccountID, u.ID)
	if err != nil {
		return err
	}
	old.Name, old.Role, old.PasswordHash, old.LastLoginAt = u.Name, u.Role, u.PasswordHash, clonePtr(u.LastLoginAt)
	return t.s.us.users.put(t.txn, old)
}

func (t *tx) DeleteUser(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	u, err := t.s.us.users.get(accountID, id)
	if err != nil {
		return err
	}
	if _, err := t.DeleteUserSessions(id); err != nil {
		return err
	}
	if _, err := t.DeleteSignInLinks(id); err != nil {
		return err
	}
	for _, rid := range slices.Clone(t.s.nt.rules.order[accountID]) { // their notification rules and schedules go too
		if t.s.nt.rules.byID[rid].UserID == id {
			if err := t.s.nt.rules.delete(t.txn, accountID, rid); err != nil {
				return err
			}
		}
	}
	for _, sid := range slices.Clone(t.s.nt.schedules.order[accountID]) {
		if t.s.nt.schedules.byID[sid].UserID == id {
			if err := t.s.nt.schedules.delete(t.txn, accountID, sid); err != nil {
				return err
			}
		}
	}
	if err := t.s.us.users.delete(t.txn, accountID, id); err != nil {
		return err
	}
	delete(t.s.us.byEmail, u.Email)
	t.undo(func() { t.s.us.byEmail[u.Email] = id })
	return nil
}

func (t *tx) CreateSession(s fleet.Session) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, ok := t.s.us.sessions[s.Hash]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A session with this secret exists.")
	}
	if _, err := t.s.us.users.get(s.AccountID, s.UserID); err != nil {
		return err
	}
	t.s.us.sessions[s.Hash] = s
	t.undo(func() { delete(t.s.us.sessions, s.Hash) })
	return nil
}

func (t *tx) Session(hash [32]byte) (fleet.Session, error) {
	s, ok := t.s.us.sessions[hash]
	if !ok {
		return fleet.Session{}, fleet.Errorf(fleet.CodeNotFound, "No such session.")
	}
	return s, nil
}

// setSession writes or deletes (ok false) a session, with its undo.
func (t *tx) setSession(hash [32]byte, s fleet.Session, ok bool) {
	old, had := t.s.us.sessions[hash]
	if ok {
		t.s.us.sessions[hash] = s
	} else {
		delete(t.s.us.sessions, hash)
	}
	t.undo(func() {
		if had {
			t.s.us.sessions[hash] = old
		} else {
			delete(t.s.us.sessions, hash)
		}
	})
}

func (t *tx) TouchSession(hash [32]byte, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	if s, ok := t.s.us.sessions[hash]; ok {
		s.LastSeenAt = at
		t.setSession(hash, s, true)
	}
	return nil
}

func (t *tx) DeleteSession(hash [32]byte) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, ok := t.s.us.sessions[hash]; ok {
		t.setSession(hash, fleet.Session{}, false)
	}
	return nil
}

func (t *tx) deleteSessions(drop func(fleet.Session) bool) (int, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	n := 0
	for h, s := range t.s.us.sessions {
		if drop(s) {
			t.setSession(h, fleet.Session{}, false)
			n++
		}
	}
	return n, nil
}

func (t *tx) DeleteUserSessions(userID string) (int, error) {
	return t.deleteSessions(func(s fleet.Session) bool { return s.UserID == userID })
}

func (t *tx) PurgeSessions(idleBefore, createdBefore time.Time) (int, error) {
	return t.deleteSessions(func(s fleet.Session) bool {
		return s.LastSeenAt.Before(idleBefore) || s.CreatedAt.Before(createdBefore)
	})
}

func (t *tx) CreateSignInLink(l fleet.SignInLink) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, ok := t.s.us.links[l.Hash]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A sign-in link with this secret exists.")
	}
	if _, err := t.s.us.users.get(l.AccountID, l.UserID); err != nil {
		return err
	}
	t.s.us.links[l.Hash] = l
	t.undo(func() { delete(t.s.us.links, l.Hash) })
	return nil
}

func (t *tx) SignInLink(hash [32]byte) (fleet.SignInLink, error) {
	l, ok := t.s.us.links[hash]
	if !ok {
		return fleet.SignInLink{}, fleet.Errorf(fleet.CodeNotFound, "No such sign-in link.")
	}
	return l, nil
}

func (t *tx) deleteLinks(drop func(fleet.SignInLink) bool) (int, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	n := 0
	for h, l := range t.s.us.links {
		if drop(l) {
			delete(t.s.us.links, h)
			t.undo(func() { t.s.us.links[h] = l })
			n++
		}
	}
	return n, nil
}

func (t *tx) DeleteSignInLinks(userID string) (int, error) {
	return t.deleteLinks(func(l fleet.SignInLink) bool { return l.UserID == userID })
}

func (t *tx) PurgeSignInLinks(before time.Time) (int, error) {
	return t.deleteLinks(func(l fleet.SignInLink) bool { return l.ExpiresAt.Before(before) })
}
