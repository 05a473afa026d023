package storetest

import (
	"cmp"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunShareLinks checks the share links area (fleet.ShareLinkTx and
// fleet.ShareLinkStore): links scoped by account, found by the hash of
// their token across accounts, that hash unique; every field round-tripped
// and copied; the status filter at a time, the vehicle filter and cursors;
// the batched lookup by id; a vehicle's links deleted; rollback; the purge.
func RunShareLinks(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"ShareLinkRoundTrip", testShareLinkRoundTrip},
		{"ShareLinksScopedByAccount", testShareLinksScoped},
		{"ShareLinksFiltersAndCursors", testShareLinksFilters},
		{"ShareLinksByID", testShareLinksByID},
		{"DeleteShareLinks", testDeleteShareLinks},
		{"ShareLinksRollback", testShareLinksRollback},
		{"ShareLinksPurge", testShareLinksPurge},
	})
}

// NewShareLink returns a link of the account's vehicle, made at T0 and
// expiring after ttl, that is not stored yet; its token is token.
func NewShareLink(accountID, vehicleID, token string, ttl time.Duration) fleet.ShareLink {
	return fleet.ShareLink{ID: fleet.NewID(fleet.PrefixShareLink), AccountID: accountID, VehicleID: vehicleID,
		Hash: fleet.HashShareToken(token), CreatedAt: T0, ExpiresAt: T0.Add(ttl)}
}

// MustShareLink stores a new link (see NewShareLink) and returns it.
func MustShareLink(tb testing.TB, s fleet.Store, accountID, vehicleID, token string, ttl time.Duration) fleet.ShareLink {
	tb.Helper()
	l := NewShareLink(accountID, vehicleID, token, ttl)
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateShareLink(l) }); err != nil {
		tb.Fatalf("create share link: %v", err)
	}
	return l
}

func getShareLink(t *testing.T, s fleet.Store, accountID, id string) (fleet.ShareLink, error) {
	t.Helper()
	var l fleet.ShareLink
	err := s.View(ctx, func(tx fleet.Tx) (err error) { l, err = tx.ShareLink(accountID, id); return err })
	return l, err
}

func shareLinkByHash(s fleet.Store, hash [32]byte) (fleet.ShareLink, error) {
	var l fleet.ShareLink
	err := s.View(ctx, func(tx fleet.Tx) (err error) { l, err = tx.ShareLinkByHash(hash); return err })
	return l, err
}

func listShareLinks(t *testing.T, s fleet.Store, accountID string, f fleet.ShareLinkFilter, p fleet.Page) []fleet.ShareLink {
	t.Helper()
	var ls []fleet.ShareLink
	if err := s.View(ctx, func(tx fleet.Tx) (err error) { ls, err = tx.ShareLinks(accountID, f, p); return err }); err != nil {
		t.Fatalf("list share links: %v", err)
	}
	return ls
}

func shareLinkIDs(ls []fleet.ShareLink) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

func testShareLinkRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "Van")
	l := MustShareLink(t, s, a.ID, v.ID, "token-a", 8*time.Hour)

	got, err := getShareLink(t, s, a.ID, l.ID)
	is.NoErr(err)
	is.Equal(got, l) // every field as stored, not revoked
	is.True(got.RevokedAt == nil)
	byHash, err := shareLinkByHash(s, fleet.HashShareToken("token-a"))
	is.NoErr(err)
	is.Equal(byHash, l)
	_, err = shareLinkByHash(s, fleet.HashShareToken("token-b"))
	is.Equal(code(err), fleet.CodeNotFound)

	revoked := T0.Add(time.Hour)
	x := l
	x.RevokedAt = &revoked
	x.VehicleID, x.ExpiresAt, x.CreatedAt = "veh_other", T0, T0.Add(time.Minute) // only revoked_at is stored
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateShareLink(x) })
	got, err = getShareLink(t, s, a.ID, l.ID)
	is.NoErr(err)
	is.True(got.RevokedAt != nil && got.RevokedAt.Equal(revoked))
	is.Equal(got.VehicleID, l.VehicleID)
	is.True(got.ExpiresAt.Equal(l.ExpiresAt) && got.CreatedAt.Equal(l.CreatedAt))
	// The store hands out copies.
	*got.RevokedAt = T0
	again, err := getShareLink(t, s, a.ID, l.ID)
	is.NoErr(err)
	is.True(again.RevokedAt.Equal(revoked))

	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateShareLink(l) })
	is.Equal(code(err), fleet.CodeConflict) // the same id twice
	b := MustAccount(t, s)
	vb := MustVehicle(t, s, b.ID, "B")
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateShareLink(NewShareLink(b.ID, vb.ID, "token-a", time.Hour)) })
	is.Equal(code(err), fleet.CodeConflict) // the same hash, whatever the account
	err = s.Update(ctx, func(tx fleet.Tx) error {
		return tx.CreateShareLink(NewShareLink("acc_missing", vb.ID, "orphan", time.Hour))
	})
	is.Equal(code(err), fleet.CodeNotFound) // no such account
	_, err = getShareLink(t, s, a.ID, fleet.NewID(fleet.PrefixShareLink))
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateShareLink(NewShareLink(a.ID, v.ID, "never", time.Hour)) })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testShareLinksScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	va, vb := MustVehicle(t, s, a.ID, "A"), MustVehicle(t, s, b.ID, "B")
	la := MustShareLink(t, s, a.ID, va.ID, "a", time.Hour)
	lb := MustShareLink(t, s, b.ID, vb.ID, "b", time.Hour)

	_, err := getShareLink(t, s, a.ID, lb.ID)
	is.Equal(code(err), fleet.CodeNotFound) // another account's link
	revoked := T0.Add(time.Minute)
	err = s.Update(ctx, func(tx fleet.Tx) error {
		x := lb
		x.AccountID, x.RevokedAt = a.ID, &revoked
		return tx.UpdateShareLink(x)
	})
	is.Equal(code(err), fleet.CodeNotFound)
	var n int
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { n, err = tx.DeleteShareLinks(a.ID, vb.ID); return err }))
	is.Equal(n, 0) // another account's vehicle: nothing deleted

	ls := listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{}, fleet.Page{Limit: 10})
	is.Equal(shareLinkIDs(ls), []string{la.ID})
	ls = listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{VehicleID: vb.ID}, fleet.Page{Limit: 10})
	is.Equal(len(ls), 0) // filtering by another account's vehicle finds nothing

	got, err := getShareLink(t, s, b.ID, lb.ID)
	is.NoErr(err)
	is.Equal(got, lb) // untouched
	byHash, err := shareLinkByHash(s, lb.Hash)
	is.NoErr(err)
	is.Equal(byHash.AccountID, b.ID) // the hash finds the link of whichever account
}

func testShareLinksFilters(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "One"), MustVehicle(t, s, a.ID, "Two")
	now := T0.Add(2 * time.Hour)
	active := MustShareLink(t, s, a.ID, v1.ID, "active", 3*time.Hour)
	expired := MustShareLink(t, s, a.ID, v1.ID, "expired", time.Hour)
	edge := MustShareLink(t, s, a.ID, v2.ID, "edge", 2*time.Hour) // expires exactly at now: expired
	revoked := MustShareLink(t, s, a.ID, v2.ID, "revoked", 5*time.Hour)
	at := T0.Add(time.Hour)
	revoked.RevokedAt = &at
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateShareLink(revoked) })
	revokedExpired := MustShareLink(t, s, a.ID, v2.ID, "revoked-expired", time.Minute)
	revokedExpired.RevokedAt = &at
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateShareLink(revokedExpired) })

	all := []string{active.ID, expired.ID, edge.ID, revoked.ID, revokedExpired.ID}
	is.Equal(shareLinkIDs(listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{}, fleet.Page{Limit: 10})), all) // id order
	for _, tc := range []struct {
		f    fleet.ShareLinkFilter
		want []string
	}{
		{fleet.ShareLinkFilter{Status: fleet.ShareLinkActive, Now: now}, []string{active.ID}},
		{fleet.ShareLinkFilter{Status: fleet.ShareLinkExpired, Now: now}, []string{expired.ID, edge.ID}},
		{fleet.ShareLinkFilter{Status: fleet.ShareLinkRevoked, Now: now}, []string{revoked.ID, revokedExpired.ID}},
		{fleet.ShareLinkFilter{Status: fleet.ShareLinkActive, Now: T0}, []string{active.ID, expired.ID, edge.ID}},
		{fleet.ShareLinkFilter{VehicleID: v1.ID}, []string{active.ID, expired.ID}},
		{fleet.ShareLinkFilter{VehicleID: v2.ID, Status: fleet.ShareLinkExpired, Now: now}, []string{edge.ID}},
	} {
		got := listShareLinks(t, s, a.ID, tc.f, fleet.Page{Limit: 10})
		is.Equal(shareLinkIDs(got), tc.want) // filter
		for _, l := range got {
			is.True(tc.f.Match(&l))
		}
	}
	// Pages: a limit, then after the last id seen.
	var walked []string
	after := ""
	for {
		page := listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{}, fleet.Page{After: after, Limit: 2})
		if len(page) == 0 {
			break
		}
		is.True(len(page) <= 2)
		walked = append(walked, shareLinkIDs(page)...)
		after = page[len(page)-1].ID
	}
	is.Equal(walked, all)
	page := listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{Status: fleet.ShareLinkExpired, Now: now}, fleet.Page{After: expired.ID, Limit: 10})
	is.Equal(shareLinkIDs(page), []string{edge.ID}) // a filter and a cursor together
	is.Equal(len(listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{}, fleet.Page{Limit: 0})), 0)
}

func testShareLinksByID(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	va, vb := MustVehicle(t, s, a.ID, "A"), MustVehicle(t, s, b.ID, "B")
	la := MustShareLink(t, s, a.ID, va.ID, "a", time.Hour)
	lb := MustShareLink(t, s, b.ID, vb.ID, "b", time.Hour)
	at := T0.Add(time.Minute)
	lb.RevokedAt = &at
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateShareLink(lb) })

	var got []fleet.ShareLink
	ids := []string{lb.ID, fleet.NewID(fleet.PrefixShareLink), la.ID}
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.ShareLinksByID(ids); return err }))
	slices.SortFunc(got, func(x, y fleet.ShareLink) int { return cmp.Compare(x.ID, y.ID) })
	is.Equal(got, []fleet.ShareLink{la, lb}) // stored ones of any account, whole; the unknown id left out
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.ShareLinksByID(nil); return err }))
	is.Equal(len(got), 0)

	many := make([]string, 0, 1200) // one statement whatever the number
	for range 1199 {
		many = append(many, fleet.NewID(fleet.PrefixShareLink))
	}
	many = append(many, la.ID)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.ShareLinksByID(many); return err }))
	is.Equal(shareLinkIDs(got), []string{la.ID})
}

func testDeleteShareLinks(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v1, v2 := MustVehicle(t, s, a.ID, "One"), MustVehicle(t, s, a.ID, "Two")
	MustShareLink(t, s, a.ID, v1.ID, "one-a", time.Hour)
	MustShareLink(t, s, a.ID, v1.ID, "one-b", time.Hour)
	kept := MustShareLink(t, s, a.ID, v2.ID, "two", time.Hour)
	var n int
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { n, err = tx.DeleteShareLinks(a.ID, v1.ID); return err }))
	is.Equal(n, 2)
	is.Equal(shareLinkIDs(listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{}, fleet.Page{Limit: 10})), []string{kept.ID})
	_, err := shareLinkByHash(s, fleet.HashShareToken("one-a"))
	is.Equal(code(err), fleet.CodeNotFound) // its token finds nothing any more
	// Its hash is free again.
	MustShareLink(t, s, a.ID, v2.ID, "one-a", time.Hour)
}

func testShareLinksRollback(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "V")
	kept := MustShareLink(t, s, a.ID, v.ID, "kept", time.Hour)
	boom := fleet.Errorf(fleet.CodeInternal, "boom")
	at := T0.Add(time.Minute)
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateShareLink(NewShareLink(a.ID, v.ID, "rolled-back", time.Hour)); err != nil {
			return err
		}
		x := kept
		x.RevokedAt = &at
		if err := tx.UpdateShareLink(x); err != nil {
			return err
		}
		if _, err := tx.DeleteShareLinks(a.ID, v.ID); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	got, err := getShareLink(t, s, a.ID, kept.ID)
	is.NoErr(err)
	is.Equal(got, kept) // neither the revocation nor the delete stayed
	_, err = shareLinkByHash(s, fleet.HashShareToken("rolled-back"))
	is.Equal(code(err), fleet.CodeNotFound) // nor the new link
	byHash, err := shareLinkByHash(s, kept.Hash)
	is.NoErr(err)
	is.Equal(byHash, kept)
}

func testShareLinksPurge(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	v := MustVehicle(t, s, a.ID, "V")
	old := MustShareLink(t, s, a.ID, v.ID, "old", time.Hour)
	edge := MustShareLink(t, s, a.ID, v.ID, "edge", 2*time.Hour)
	fresh := MustShareLink(t, s, a.ID, v.ID, "fresh", 3*time.Hour)
	at := T0.Add(time.Minute)
	old.RevokedAt = &at
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateShareLink(old) })
	n, err := s.PurgeShareLinks(ctx, edge.ExpiresAt)
	is.NoErr(err)
	is.Equal(n, 1) // only the link that expired before the time, revoked or not
	_, err = getShareLink(t, s, a.ID, old.ID)
	is.Equal(code(err), fleet.CodeNotFound)
	_, err = shareLinkByHash(s, old.Hash)
	is.Equal(code(err), fleet.CodeNotFound)
	is.Equal(shareLinkIDs(listShareLinks(t, s, a.ID, fleet.ShareLinkFilter{}, fleet.Page{Limit: 10})), []string{edge.ID, fresh.ID})
}
