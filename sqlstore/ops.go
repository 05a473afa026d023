package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The narrow methods of fleet.Store that the request path calls.

const keyByHashQuery = `SELECT ` + keyColumns + `, ` + accountColumns + `
	FROM api_keys k JOIN accounts a ON a.id = k.account_id
	WHERE k.hash = ?`

// KeyByHash implements fleet.Store with one query joining the key and its
// account.
func (s *Store) KeyByHash(ctx context.Context, hash [32]byte) (fleet.Key, fleet.Account, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var r keyRow
	var a fleet.Account
	var plan string
	var override, created int64
	dest := append(r.dest(), &a.ID, &a.CompanyName, &plan, &override, &created)
	err := s.keyByHash.QueryRowContext(ctx, hash[:]).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Key{}, fleet.Account{}, fleet.Errorf(fleet.CodeNotFound, "No such key.")
	}
	if err != nil {
		return fleet.Key{}, fleet.Account{}, wrap(err, "key by hash")
	}
	k, err := r.key()
	if err != nil {
		return fleet.Key{}, fleet.Account{}, err
	}
	a.Plan, a.RateLimitOverride, a.CreatedAt = fleet.Plan(plan), int(override), fromDB(created)
	return k, a, nil
}

// TakeQuota implements fleet.Store. On SQLite the windows are held in
// memory (see the package documentation); on PostgreSQL one statement
// applies fleet.TakeQuota to the subject's row, for all the requests of the
// subject that arrived on this server while the last statement was on its
// way, so that concurrent requests from every server sharing the database
// are counted one after the other (see takeQuotaSQL). The windows of client
// addresses (requests without a valid key) stay in each server's memory.
func (s *Store) TakeQuota(ctx context.Context, subject string, limit int, now time.Time) (fleet.Quota, error) {
	return s.eng.takeQuota(ctx, subject, limit, now)
}

// TakeQuotaN implements fleet.Store: in memory on SQLite, as TakeQuota;
// on PostgreSQL one statement on the subject's row (takeQuotaNSQL).
func (s *Store) TakeQuotaN(ctx context.Context, subject string, n, limit int, now time.Time) (fleet.Quota, error) {
	return s.eng.takeQuotaN(ctx, subject, n, limit, now)
}

// RefundQuota implements fleet.Store, where TakeQuotaN keeps the subject.
func (s *Store) RefundQuota(ctx context.Context, subject string, n int, reset time.Time) error {
	if n <= 0 {
		return nil
	}
	return s.eng.refundQuota(ctx, subject, n, reset)
}

// RecordUsage implements fleet.Store: in one transaction, each entry's
// counts are added to its key's hour and the key's last_used_at moves
// forward. Entries are applied in key order, so that servers flushing at the
// same time lock rows in the same order.
func (s *Store) RecordUsage(ctx context.Context, usage []fleet.Usage) error {
	if len(usage) == 0 {
		return nil
	}
	us := slices.Clone(usage)
	slices.SortFunc(us, func(a, b fleet.Usage) int {
		return cmp.Or(cmp.Compare(a.KeyID, b.KeyID), a.Hour.Compare(b.Hour))
	})
	err := s.eng.write(ctx, func(t *tx) error {
		for _, u := range us {
			last := toDB(u.LastUsedAt)
			n, err := t.update(`UPDATE api_keys SET last_used_at =
					CASE WHEN last_used_at IS NULL OR last_used_at < ? THEN ? ELSE last_used_at END
				WHERE id = ?`, last, last, u.KeyID)
			if err != nil {
				return err
			}
			if n == 0 {
				continue // the key is gone
			}
			if _, err := t.update(`INSERT INTO key_usage (key_id, hour, requests, rejected) VALUES (?, ?, ?, ?)
				ON CONFLICT (key_id, hour) DO UPDATE SET
					requests = key_usage.requests + excluded.requests,
					rejected = key_usage.rejected + excluded.rejected`,
				u.KeyID, toDB(u.Hour), int64(u.Requests), int64(u.Rejected)); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "record usage")
}

// Usage implements fleet.Store.
func (s *Store) Usage(ctx context.Context, keyID string, from time.Time) ([]fleet.Usage, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.rdb.QueryContext(ctx, s.d.q(`SELECT hour, requests, rejected FROM key_usage
		WHERE key_id = ? AND hour >= ? ORDER BY hour DESC`), keyID, toDB(from))
	if err != nil {
		return nil, wrap(err, "read usage")
	}
	defer rows.Close()
	var out []fleet.Usage
	for rows.Next() {
		var hour, requests, rejected int64
		if err := rows.Scan(&hour, &requests, &rejected); err != nil {
			return nil, wrap(err, "read usage")
		}
		out = append(out, fleet.Usage{KeyID: keyID, Hour: fromDB(hour), Requests: int(requests), Rejected: int(rejected)})
	}
	return out, wrap(rows.Err(), "read usage")
}

// BeginIdempotency implements fleet.Store: in one transaction the record is
// inserted unless one exists; an existing one is locked and either returned
// (it still blocks) or replaced.
func (s *Store) BeginIdempotency(ctx context.Context, rec fleet.IdempotencyRecord) (fleet.IdempotencyRecord, bool, error) {
	var prev fleet.IdempotencyRecord
	var found bool
	err := s.eng.write(ctx, func(t *tx) error {
		prev, found = fleet.IdempotencyRecord{}, false
		for range 3 {
			n, err := t.update(`INSERT INTO idempotency (key_id, idem_key, request_hash, created_at, done, status, body)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_id, idem_key) DO NOTHING`,
				rec.KeyID, rec.Key, rec.RequestHash[:], toDB(rec.CreatedAt), rec.Done, int64(rec.Status), rec.Body)
			if err != nil || n == 1 {
				return err
			}
			var hash []byte
			var created, status int64
			err = t.queryRow(`SELECT request_hash, created_at, done, status, body FROM idempotency
				WHERE key_id = ? AND idem_key = ?`+s.d.forUpdate, rec.KeyID, rec.Key).
				Scan(&hash, &created, &prev.Done, &status, &prev.Body)
			if errors.Is(err, sql.ErrNoRows) {
				continue // deleted since the insert: try again
			}
			if err != nil {
				return t.failed(err)
			}
			if prev.RequestHash, err = hashFromDB(hash); err != nil {
				return err
			}
			prev.KeyID, prev.Key, prev.CreatedAt, prev.Status = rec.KeyID, rec.Key, fromDB(created), int(status)
			if prev.Blocks(rec.CreatedAt) {
				found = true
				return nil
			}
			_, err = t.update(`UPDATE idempotency SET request_hash = ?, created_at = ?, done = ?, status = ?, body = ?
				WHERE key_id = ? AND idem_key = ?`,
				rec.RequestHash[:], toDB(rec.CreatedAt), rec.Done, int64(rec.Status), rec.Body, rec.KeyID, rec.Key)
			return err
		}
		return fmt.Errorf("sqlstore: idempotency record keeps disappearing")
	})
	if err != nil {
		return fleet.IdempotencyRecord{}, false, wrap(err, "begin idempotency")
	}
	if !found {
		return fleet.IdempotencyRecord{}, false, nil
	}
	return prev, true, nil
}

// FinishIdempotency implements fleet.Store.
func (s *Store) FinishIdempotency(ctx context.Context, keyID, idemKey string, status int, body []byte) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	res, err := s.wdb.ExecContext(ctx, s.d.q(`UPDATE idempotency SET done = ?, status = ?, body = ?
		WHERE key_id = ? AND idem_key = ?`), true, int64(status), body, keyID, idemKey)
	if err != nil {
		return wrap(err, "finish idempotency")
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return wrap(err, "finish idempotency")
		}
		return fleet.Errorf(fleet.CodeNotFound, "No such idempotency record.")
	}
	return nil
}

// DeleteIdempotency implements fleet.Store.
func (s *Store) DeleteIdempotency(ctx context.Context, keyID, idemKey string) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	_, err := s.wdb.ExecContext(ctx, s.d.q(`DELETE FROM idempotency WHERE key_id = ? AND idem_key = ?`), keyID, idemKey)
	return wrap(err, "delete idempotency")
}

// PurgeIdempotency implements fleet.Store.
func (s *Store) PurgeIdempotency(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM idempotency WHERE created_at < ?`, before, "purge idempotency")
}

// PurgeQuota implements fleet.Store.
func (s *Store) PurgeQuota(ctx context.Context, before time.Time) (int, error) {
	return s.eng.purgeQuota(ctx, before)
}

// purgeQuotaSQL deletes the windows that started before its argument:
// PurgeQuota's `before` less a window, since a window that ended before
// `before` started a window's length earlier.
const purgeQuotaSQL = `DELETE FROM quotas WHERE window_start < ?`

// PurgeUsage implements fleet.Store.
func (s *Store) PurgeUsage(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM key_usage WHERE hour < ?`, before, "purge usage")
}

// AppendLive implements fleet.LiveFeed: on PostgreSQL the reports go to
// the feed every server follows (pg_live.go); a SQLite file, which one
// process owns, has none (fleet.ErrNoLiveFeed).
func (s *Store) AppendLive(ctx context.Context, accountID string, items []fleet.StreamItem, at time.Time) error {
	return s.eng.appendLive(ctx, accountID, items, at)
}

// AppendsLiveWithIngest implements fleet.IngestLiveFeed: on PostgreSQL
// a location batch's live reports are appended in its group's write-set
// statement (group_writes.go), so they take their ids as it commits.
func (s *Store) AppendsLiveWithIngest() bool {
	_, ok := s.eng.(*pgEngine)
	return ok
}

// TakesQuotaWithIngest implements fleet.IngestQuotaStore: on PostgreSQL
// a location batch's points allowance is counted in its group's write-set
// statement (group_writes.go).
func (s *Store) TakesQuotaWithIngest() bool { return s.AppendsLiveWithIngest() }

// FollowLive implements fleet.LiveFeed.
func (s *Store) FollowLive(ctx context.Context, since time.Time, deliver func([]fleet.LiveBatch)) error {
	return s.eng.followLive(ctx, since, deliver)
}

// PurgeLive implements fleet.LiveFeed.
func (s *Store) PurgeLive(ctx context.Context, before time.Time) (int, error) {
	return s.eng.purgeLive(ctx, before)
}
