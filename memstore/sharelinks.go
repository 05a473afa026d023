package memstore

import (
	"context"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// shareLinkTables hold the share links, with their index of token hashes
// (unique across accounts).
type shareLinkTables struct {
	links  *table[fleet.ShareLink]
	byHash map[[32]byte]string // hash -> link id
}

func newShareLinkTables() *shareLinkTables {
	return &shareLinkTables{
		links: newTable("share link", func(l fleet.ShareLink) string { return l.ID },
			func(l fleet.ShareLink) string { return l.AccountID }, fleet.ShareLink.Clone),
		byHash: map[[32]byte]string{},
	}
}

func (t *tx) CreateShareLink(l fleet.ShareLink) error {
	if err := t.writable(); err != nil {
		return err
	}
	st := t.s.sh
	if _, ok := st.byHash[l.Hash]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A share link with this token exists.")
	}
	if _, err := t.s.accounts.get("", l.AccountID); err != nil {
		return err
	}
	if err := st.links.insert(t.txn, l); err != nil {
		return err
	}
	st.byHash[l.Hash] = l.ID
	t.undo(func() { delete(st.byHash, l.Hash) })
	return nil
}

func (t *tx) ShareLink(accountID, id string) (fleet.ShareLink, error) {
	return t.s.sh.links.get(accountID, id)
}

func (t *tx) ShareLinkByHash(hash [32]byte) (fleet.ShareLink, error) {
	id, ok := t.s.sh.byHash[hash]
	if !ok {
		return fleet.ShareLink{}, fleet.Errorf(fleet.CodeNotFound, "No such share link.")
	}
	return t.s.sh.links.get("", id)
}

func (t *tx) ShareLinksByID(ids []string) ([]fleet.ShareLink, error) {
	out := []fleet.ShareLink{}
	for _, id := range ids {
		if l, err := t.s.sh.links.get("", id); err == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

func (t *tx) ShareLinks(accountID string, f fleet.ShareLinkFilter, p fleet.Page) ([]fleet.ShareLink, error) {
	return t.s.sh.links.list(accountID, p, func(l fleet.ShareLink) bool { return f.Match(&l) }), nil
}

func (t *tx) UpdateShareLink(l fleet.ShareLink) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.sh.links.get(l.AccountID, l.ID)
	if err != nil {
		return err
	}
	old.RevokedAt = clonePtr(l.RevokedAt)
	return t.s.sh.links.put(t.txn, old)
}

func (t *tx) DeleteShareLinks(accountID, vehicleID string) (int, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	st := t.s.sh
	var gone []fleet.ShareLink
	for _, id := range st.links.order[accountID] {
		if l := st.links.byID[id]; l.VehicleID == vehicleID {
			gone = append(gone, l)
		}
	}
	for _, l := range gone {
		if err := st.links.delete(t.txn, accountID, l.ID); err != nil {
			return 0, err
		}
		delete(st.byHash, l.Hash)
		t.undo(func() { st.byHash[l.Hash] = l.ID })
	}
	return len(gone), nil
}

// PurgeShareLinks implements fleet.Store.
func (s *Store) PurgeShareLinks(ctx context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed()
	}
	var old []fleet.ShareLink
	for _, l := range s.sh.links.byID {
		if l.ExpiresAt.Before(before) {
			old = append(old, l)
		}
	}
	for _, l := range old {
		s.sh.links.remove(l.AccountID, l.ID)
		delete(s.sh.byHash, l.Hash)
	}
	return len(old), nil
}
