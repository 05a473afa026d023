package fleet

import "context"

// The people of an account: an admin changes a person's role, removes a
// person, or makes a new one-time sign-in link for someone who forgot
// their password; the operator does the last two from the command line.
// An account always keeps an admin: the last one can be neither removed
// nor made a viewer (conflict), so that someone can always manage it.

func notFoundUser(id string) error { return NotFound("user", id) }

// accountUser reads a user of the account; not_found for a malformed id,
// another account's user or none.
func accountUser(tx UserTx, accountID, id string) (User, error) {
	if !ValidID(PrefixUser, id) {
		return User{}, notFoundUser(id)
	}
	u, err := tx.User(accountID, id)
	if ErrorCode(err) == CodeNotFound {
		return User{}, notFoundUser(id)
	}
	return u, err
}

// keepsAnAdmin refuses, as conflict, to take the admin role from u (to
// remove u, or make u a viewer) when u is the account's only admin. It
// reads the account's users in the change's transaction, so that two
// admins who demote each other at once cannot both succeed.
func keepsAnAdmin(tx UserTx, u User, doing string) error {
	if u.Role != RoleAdmin {
		return nil
	}
	p := Page{Limit: MaxPageLimit}
	for {
		users, err := tx.Users(u.AccountID, p)
		if err != nil {
			return err
		}
		for _, o := range users {
			if o.ID != u.ID && o.Role == RoleAdmin {
				return nil
			}
		}
		if len(users) < p.Limit {
			return Errorf(CodeConflict, "%s is the account's only admin and cannot be %s: make another person admin first.", u.Email, doing)
		}
		p.After = users[len(users)-1].ID
	}
}

// SetUserRole gives a person of the admin's account another role. Only an
// admin may; the account's only admin cannot become a viewer (conflict).
// The change takes effect on the person's next request: sessions read the
// role afresh.
func (s *Service) SetUserRole(ctx context.Context, us UserSession, userID string, role Role) (User, error) {
	if err := us.requireAdmin(); err != nil {
		return User{}, err
	}
	if !role.Valid() {
		var v Validator
		v.Add("role", "must be admin, manager or viewer")
		return User{}, v.Err()
	}
	var u User
	err := s.update(ctx, func(tx Tx) (err error) {
		if u, err = accountUser(tx, us.Account.ID, userID); err != nil {
			return err
		}
		if u.Role == role {
			return nil
		}
		if role != RoleAdmin {
			if err := keepsAnAdmin(tx, u, "made a "+string(role)); err != nil {
				return err
			}
		}
		u.Role = role
		return tx.UpdateUser(u)
	})
	if err != nil {
		return User{}, err
	}
	return u, nil
}

// RemoveUser removes a person from the admin's account: their sessions
// end and their sign-in links stop working at once, and their e-mail
// address is free to be added again. Only an admin may; the account's
// only admin cannot be removed (conflict). It returns the person removed.
func (s *Service) RemoveUser(ctx context.Context, us UserSession, userID string) (User, error) {
	if err := us.requireAdmin(); err != nil {
		return User{}, err
	}
	return s.removeUser(ctx, us.Account.ID, userID)
}

func (s *Service) removeUser(ctx context.Context, accountID, userID string) (User, error) {
	var u User
	err := s.update(ctx, func(tx Tx) (err error) {
		if u, err = accountUser(tx, accountID, userID); err != nil {
			return err
		}
		if err := keepsAnAdmin(tx, u, "removed"); err != nil {
			return err
		}
		if _, err := tx.DeleteUserSessions(u.ID); err != nil {
			return err
		}
		if _, err := tx.DeleteSignInLinks(u.ID); err != nil {
			return err
		}
		return tx.DeleteUser(u.AccountID, u.ID)
	})
	if err != nil {
		return User{}, err
	}
	return u, nil
}

// NewSignInLink makes a new one-time sign-in link, valid SignInLinkTTL,
// for a person of the admin's account who forgot their password (or
// whose first link expired), and returns its secret; no e-mail is sent.
// The person's earlier links stop working; their password and sessions
// stay until the link is used, which sets a new password and ends every
// other session. Only an admin may.
func (s *Service) NewSignInLink(ctx context.Context, us UserSession, userID string) (User, string, error) {
	if err := us.requireAdmin(); err != nil {
		return User{}, "", err
	}
	return s.newSignInLink(ctx, us.Account.ID, userID)
}

func (s *Service) newSignInLink(ctx context.Context, accountID, userID string) (User, string, error) {
	now := s.Now()
	var u User
	var secret string
	err := s.update(ctx, func(tx Tx) (err error) {
		if u, err = accountUser(tx, accountID, userID); err != nil {
			return err
		}
		if _, err := tx.DeleteSignInLinks(u.ID); err != nil {
			return err
		}
		var l SignInLink
		secret, l = newSignInLink(u, now)
		return tx.CreateSignInLink(l)
	})
	if err != nil {
		return User{}, "", err
	}
	return u, secret, nil
}

// Users lists the people of an account by its id, oldest first.
func (o Operator) Users(ctx context.Context, accountID string, q ListQuery) (List[User], error) {
	if _, err := o.Account(ctx, accountID); err != nil {
		return List[User]{}, err
	}
	page, limit, err := q.page(PrefixUser, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[User]{}, err
	}
	var us []User
	err = o.s.view(ctx, func(tx Tx) (err error) { us, err = tx.Users(accountID, page); return err })
	if err != nil {
		return List[User]{}, err
	}
	return finish(us, limit, func(u User) string { return u.ID }), nil
}

// userOf finds a user of any account by id.
func (o Operator) userOf(ctx context.Context, userID string) (User, error) {
	if !ValidID(PrefixUser, userID) {
		return User{}, notFoundUser(userID)
	}
	var u User
	err := o.s.view(ctx, func(tx Tx) (err error) { u, err = tx.UserByID(userID); return err })
	if ErrorCode(err) == CodeNotFound {
		return User{}, notFoundUser(userID)
	}
	return u, err
}

// RemoveUser removes a person of any account by their id, as an admin's
// RemoveUser does: their sessions and sign-in links end with them, and the
// account's only admin cannot be removed (conflict).
func (o Operator) RemoveUser(ctx context.Context, userID string) (User, error) {
	u, err := o.userOf(ctx, userID)
	if err != nil {
		return User{}, err
	}
	return o.s.removeUser(ctx, u.AccountID, u.ID)
}

// NewSignInLink makes a new one-time sign-in link for a person of any
// account by their id, as an admin's NewSignInLink does, and returns its
// secret.
func (o Operator) NewSignInLink(ctx context.Context, userID string) (User, string, error) {
	u, err := o.userOf(ctx, userID)
	if err != nil {
		return User{}, "", err
	}
	return o.s.newSignInLink(ctx, u.AccountID, u.ID)
}
