package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// CreateStreamToken implements fleet.Store.
func (s *Store) CreateStreamToken(ctx context.Context, t fleet.StreamToken) error {
	_, err := s.wdb.ExecContext(ctx, s.d.q(`INSERT INTO stream_tokens (hash, key_id, account_id, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`), t.Hash[:], t.KeyID, t.AccountID, toDB(t.CreatedAt), toDB(t.ExpiresAt))
	if err != nil && classify(err) == errUnique {
		return fleet.Errorf(fleet.CodeConflict, "The stream token exists.")
	}
	return wrap(err, "create stream token")
}

// TakeStreamToken implements fleet.Store with one DELETE ... RETURNING: the
// row goes with the statement that reads it, so two servers taking the same
// token cannot both get it.
func (s *Store) TakeStreamToken(ctx context.Context, hash [32]byte, now time.Time) (fleet.StreamToken, error) {
	t := fleet.StreamToken{Hash: hash}
	var created, expires int64
	err := s.wdb.QueryRowContext(ctx, s.d.q(`DELETE FROM stream_tokens WHERE hash = ?
		RETURNING key_id, account_id, created_at, expires_at`), hash[:]).Scan(&t.KeyID, &t.AccountID, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.StreamToken{}, fleet.Errorf(fleet.CodeNotFound, "No such stream token.")
	}
	if err != nil {
		return fleet.StreamToken{}, wrap(err, "take stream token")
	}
	t.CreatedAt, t.ExpiresAt = fromDB(created), fromDB(expires)
	if !now.Before(t.ExpiresAt) {
		return fleet.StreamToken{}, fleet.Errorf(fleet.CodeNotFound, "No such stream token.")
	}
	return t, nil
}

// PurgeStreamTokens implements fleet.Store.
func (s *Store) PurgeStreamTokens(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM stream_tokens WHERE expires_at < ?`, before, "purge stream tokens")
}
