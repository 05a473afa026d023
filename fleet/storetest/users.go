package storetest

import (
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunUsers checks the users area (fleet.UserTx): users scoped by account and
// unique by e-mail, sessions and sign-in links found by hash, deleted by
// user and purged by time.
func RunUsers(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"UserRoundTrip", testUserRoundTrip},
		{"UsersScopedAndUniqueEmail", testUsersScoped},
		{"Sessions", testSessions},
		{"SignInLinks", testSignInLinks},
		{"UsersRollback", testUsersRollback},
		{"DeleteUser", testDeleteUser},
	})
}

// NewUser returns a user of the account that is not stored yet.
func NewUser(accountID, email string) fleet.User {
	return fleet.User{ID: fleet.NewID(fleet.PrefixUser), AccountID: accountID, Email: email, Name: "Ada",
		Role: fleet.RoleAdmin, PasswordHash: "$argon2id$x", CreatedAt: T0}
}

func mustUser(t *testing.T, s fleet.Store, accountID, email string) fleet.User {
	t.Helper()
	u := NewUser(accountID, email)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.CreateUser(u) })
	return u
}

func testUserRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := mustUser(t, s, a.ID, "ada@example.com")
	var got fleet.User
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.User(a.ID, u.ID); return err }))
	is.Equal(got, u)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.UserByEmail("ada@example.com"); return err }))
	is.Equal(got.ID, u.ID)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.UserByID(u.ID); return err }))
	is.Equal(got.ID, u.ID)

	login := T0.Add(time.Hour)
	upd := u
	upd.Name, upd.Role, upd.PasswordHash, upd.LastLoginAt = "Ada L.", fleet.RoleViewer, "$argon2id$y", &login
	upd.Email, upd.CreatedAt = "changed@example.com", T0.Add(time.Minute) // immutable
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateUser(upd) })
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.UserByID(u.ID); return err }))
	is.Equal(got.Name, "Ada L.")
	is.Equal(got.Role, fleet.RoleViewer)
	is.Equal(got.PasswordHash, "$argon2id$y")
	is.True(got.LastLoginAt != nil && got.LastLoginAt.Equal(login))
	is.Equal(got.Email, "ada@example.com")
	is.True(got.CreatedAt.Equal(T0))

	err := s.Update(ctx, func(tx fleet.Tx) error {
		missing := NewUser(a.ID, "x@example.com")
		return tx.UpdateUser(missing)
	})
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateUser(NewUser("acc_missing", "y@example.com")) })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testUsersScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	u1 := mustUser(t, s, a.ID, "one@example.com")
	u2 := mustUser(t, s, a.ID, "two@example.com")
	ub := mustUser(t, s, b.ID, "bee@example.com")

	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateUser(NewUser(b.ID, "one@example.com")) })
	is.Equal(code(err), fleet.CodeConflict) // e-mail unique across accounts

	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.User(a.ID, ub.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.UserByEmail("nobody@example.com"); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { x := ub; x.AccountID = a.ID; return tx.UpdateUser(x) })
	is.Equal(code(err), fleet.CodeNotFound) // cannot update another account's user

	var page []fleet.User
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { page, err = tx.Users(a.ID, fleet.Page{Limit: 10}); return err }))
	is.Equal(len(page), 2)
	is.Equal(page[0].ID, u1.ID)
	is.Equal(page[1].ID, u2.ID)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) {
		page, err = tx.Users(a.ID, fleet.Page{After: u1.ID, Limit: 10})
		return err
	}))
	is.Equal(len(page), 1)
	is.Equal(page[0].ID, u2.ID)
}

func testSessions(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := mustUser(t, s, a.ID, "ada@example.com")
	other := mustUser(t, s, a.ID, "bob@example.com")
	sess := func(u fleet.User, b byte, created, seen time.Time) fleet.Session {
		return fleet.Session{Hash: [32]byte{b}, UserID: u.ID, AccountID: u.AccountID, CreatedAt: created, LastSeenAt: seen}
	}
	s1 := sess(u, 1, T0, T0)
	s2 := sess(u, 2, T0, T0.Add(time.Hour))
	s3 := sess(other, 3, T0.Add(-8*24*time.Hour), T0)
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, x := range []fleet.Session{s1, s2, s3} {
			if err := tx.CreateSession(x); err != nil {
				return err
			}
		}
		return nil
	})
	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateSession(s1) })
	is.Equal(code(err), fleet.CodeConflict)

	var got fleet.Session
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Session(s2.Hash); return err }))
	is.Equal(got.UserID, u.ID)
	is.True(got.CreatedAt.Equal(T0) && got.LastSeenAt.Equal(T0.Add(time.Hour)))
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Session([32]byte{9}); return err })
	is.Equal(code(err), fleet.CodeNotFound)

	later := T0.Add(2 * time.Hour)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.TouchSession(s1.Hash, later) })
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Session(s1.Hash); return err }))
	is.True(got.LastSeenAt.Equal(later))

	// Purge: s2 idle (seen before T0+90m), s3 too old; s1 stays.
	var n int
	mustUpdate(t, s, func(tx fleet.Tx) (err error) {
		n, err = tx.PurgeSessions(T0.Add(90*time.Minute), T0.Add(-7*24*time.Hour))
		return err
	})
	is.Equal(n, 2)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Session(s3.Hash); return err })
	is.Equal(code(err), fleet.CodeNotFound)

	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.CreateSession(sess(u, 4, T0, later)) })
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteSession(s1.Hash) })
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Session(s1.Hash); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteSession(s1.Hash) }) // again: nothing
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { n, err = tx.DeleteUserSessions(u.ID); return err })
	is.Equal(n, 1)
}

func testSignInLinks(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := mustUser(t, s, a.ID, "ada@example.com")
	l1 := fleet.SignInLink{Hash: [32]byte{1}, UserID: u.ID, AccountID: a.ID, CreatedAt: T0, ExpiresAt: T0.Add(24 * time.Hour)}
	l2 := fleet.SignInLink{Hash: [32]byte{2}, UserID: u.ID, AccountID: a.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.CreateSignInLink(l1); err != nil {
			return err
		}
		return tx.CreateSignInLink(l2)
	})
	var got fleet.SignInLink
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.SignInLink(l1.Hash); return err }))
	is.Equal(got.UserID, u.ID)
	is.True(got.ExpiresAt.Equal(l1.ExpiresAt))
	var n int
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { n, err = tx.PurgeSignInLinks(T0.Add(2 * time.Hour)); return err })
	is.Equal(n, 1)
	err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.SignInLink(l2.Hash); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { n, err = tx.DeleteSignInLinks(u.ID); return err })
	is.Equal(n, 1)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.SignInLink(l1.Hash); return err })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testUsersRollback(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := NewUser(a.ID, "ada@example.com")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateUser(u); err != nil {
			return err
		}
		if err := tx.CreateSession(fleet.Session{Hash: [32]byte{1}, UserID: u.ID, AccountID: a.ID, CreatedAt: T0, LastSeenAt: T0}); err != nil {
			return err
		}
		return fleet.Errorf(fleet.CodeConflict, "stop")
	})
	is.Equal(code(err), fleet.CodeConflict)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.UserByEmail(u.Email); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Session([32]byte{1}); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	mustUser(t, s, a.ID, "ada@example.com") // the e-mail is free again
}

// DeleteUser deletes only the account's user, with their sessions and
// links, frees their e-mail address, and is undone by a rollback.
func testDeleteUser(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	u := mustUser(t, s, a.ID, "ada@example.com")
	other := mustUser(t, s, a.ID, "bob@example.com")
	ub := mustUser(t, s, b.ID, "bee@example.com")
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for i, x := range []fleet.User{u, other} {
			h := byte(10 * (i + 1))
			if err := tx.CreateSession(fleet.Session{Hash: [32]byte{h}, UserID: x.ID, AccountID: a.ID, CreatedAt: T0, LastSeenAt: T0}); err != nil {
				return err
			}
			if err := tx.CreateSignInLink(fleet.SignInLink{Hash: [32]byte{h + 1}, UserID: x.ID, AccountID: a.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
				return err
			}
		}
		return nil
	})

	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteUser(a.ID, ub.ID) })
	is.Equal(code(err), fleet.CodeNotFound) // another account's user
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteUser(a.ID, "usr_missing") })
	is.Equal(code(err), fleet.CodeNotFound)

	// Rolled back: nothing is gone.
	err = s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.DeleteUser(a.ID, u.ID); err != nil {
			return err
		}
		return fleet.Errorf(fleet.CodeConflict, "stop")
	})
	is.Equal(code(err), fleet.CodeConflict)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error { _, err := tx.UserByEmail(u.Email); return err }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Session([32]byte{10}); return err }))

	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteUser(a.ID, u.ID) })
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.UserByID(u.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.UserByEmail(u.Email); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Session([32]byte{10}); return err })
	is.Equal(code(err), fleet.CodeNotFound) // the session went with the user
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.SignInLink([32]byte{11}); return err })
	is.Equal(code(err), fleet.CodeNotFound)                                                              // and the link
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Session([32]byte{20}); return err }))    // the other person's stay
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error { _, err := tx.SignInLink([32]byte{21}); return err })) //
	var page []fleet.User
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { page, err = tx.Users(a.ID, fleet.Page{Limit: 10}); return err }))
	is.Equal(len(page), 1)
	is.Equal(page[0].ID, other.ID)
	mustUser(t, s, b.ID, "ada@example.com") // the e-mail is free again, in any account
}
