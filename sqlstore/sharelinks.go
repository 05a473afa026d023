package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The share links area (table share_links, migration 0021).

const shareLinkColumns = `id, account_id, vehicle_id, hash, created_at, expires_at, revoked_at`

func scanShareLink(s scanner) (fleet.ShareLink, error) {
	var l fleet.ShareLink
	var hash []byte
	var created, expires int64
	var revoked sql.NullInt64
	if err := s.Scan(&l.ID, &l.AccountID, &l.VehicleID, &hash, &created, &expires, &revoked); err != nil {
		return fleet.ShareLink{}, err
	}
	copy(l.Hash[:], hash)
	l.CreatedAt, l.ExpiresAt, l.RevokedAt = fromDB(created), fromDB(expires), fromNullDB(revoked)
	return l, nil
}

// CreateShareLink implements fleet.Tx.
func (t *tx) CreateShareLink(l fleet.ShareLink) error {
	err := t.insert(`INSERT INTO share_links (`+shareLinkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.AccountID, l.VehicleID, l.Hash[:], toDB(l.CreatedAt), toDB(l.ExpiresAt), toNullDB(l.RevokedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A share link with this id or token exists.")
	case errForeignKey:
		return notFound(err, "account", l.AccountID)
	}
	return wrap(err, "create share link")
}

func (t *tx) oneShareLink(where string, args ...any) (fleet.ShareLink, error) {
	l, err := scanShareLink(t.queryRow(`SELECT `+shareLinkColumns+` FROM share_links WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.ShareLink{}, fleet.Errorf(fleet.CodeNotFound, "No such share link.")
	}
	return l, wrap(t.failed(err), "read share link")
}

// ShareLink implements fleet.Tx.
func (t *tx) ShareLink(accountID, id string) (fleet.ShareLink, error) {
	return t.oneShareLink(`id = ? AND account_id = ?`, id, accountID)
}

// ShareLinkByHash implements fleet.Tx: one seek down share_links_hash.
func (t *tx) ShareLinkByHash(hash [32]byte) (fleet.ShareLink, error) {
	return t.oneShareLink(`hash = ?`, hash[:])
}

// ShareLinksByID implements fleet.Tx with one statement whatever the
// number of ids (the dialect's idsIn).
func (t *tx) ShareLinksByID(ids []string) ([]fleet.ShareLink, error) {
	out := []fleet.ShareLink{}
	if len(ids) == 0 {
		return out, nil
	}
	return t.shareLinks(out, "read share links", `SELECT `+shareLinkColumns+` FROM share_links WHERE `+t.d.idsIn, t.d.idsArg(ids))
}

// ShareLinks implements fleet.Tx.
func (t *tx) ShareLinks(accountID string, f fleet.ShareLinkFilter, p fleet.Page) ([]fleet.ShareLink, error) {
	out := []fleet.ShareLink{}
	if p.Limit <= 0 {
		return out, nil
	}
	where := []string{"account_id = ?", "id > ?"}
	args := []any{accountID, p.After}
	if f.VehicleID != "" {
		where, args = append(where, "vehicle_id = ?"), append(args, f.VehicleID)
	}
	now := toDB(f.Now)
	switch f.Status { // as fleet.ShareLink.Status decides
	case fleet.ShareLinkRevoked:
		where = append(where, "revoked_at IS NOT NULL")
	case fleet.ShareLinkExpired:
		where, args = append(where, "revoked_at IS NULL", "expires_at <= ?"), append(args, now)
	case fleet.ShareLinkActive:
		where, args = append(where, "revoked_at IS NULL", "expires_at > ?"), append(args, now)
	}
	ls, err := t.shareLinks(out, "list share links", `SELECT `+shareLinkColumns+` FROM share_links WHERE `+
		strings.Join(where, " AND ")+` ORDER BY id LIMIT ?`, append(args, int64(p.Limit))...)
	if err != nil {
		return nil, err
	}
	kept := ls[:0]
	for _, l := range ls {
		if f.Match(&l) {
			kept = append(kept, l)
		}
	}
	return kept, nil
}

// shareLinks appends the links a query (written with ? placeholders)
// returns to out.
func (t *tx) shareLinks(out []fleet.ShareLink, doing, query string, args ...any) ([]fleet.ShareLink, error) {
	rows, err := t.query(t.d.q(query), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	for rows.Next() {
		l, err := scanShareLink(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, l)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

// UpdateShareLink implements fleet.Tx.
func (t *tx) UpdateShareLink(l fleet.ShareLink) error {
	n, err := t.update(`UPDATE share_links SET revoked_at = ? WHERE id = ? AND account_id = ?`,
		toNullDB(l.RevokedAt), l.ID, l.AccountID)
	if err != nil {
		return wrap(err, "update share link")
	}
	if n == 0 {
		return fleet.NotFound("share link", l.ID)
	}
	return nil
}

// DeleteShareLinks implements fleet.Tx.
func (t *tx) DeleteShareLinks(accountID, vehicleID string) (int, error) {
	n, err := t.update(`DELETE FROM share_links WHERE account_id = ? AND vehicle_id = ?`, accountID, vehicleID)
	return int(n), wrap(err, "delete share links")
}

// PurgeShareLinks implements fleet.Store.
func (s *Store) PurgeShareLinks(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM share_links WHERE expires_at < ?`, before, "purge share links")
}
