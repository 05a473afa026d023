package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Times are stored as Unix microseconds (BIGINT) on both dialects: exact at
// the domain's precision (fleet.Timestamp) and read back in UTC.

func toDB(t time.Time) int64 { return t.UnixMicro() }

func fromDB(us int64) time.Time { return time.UnixMicro(us).UTC() }

func toNullDB(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// Optional text (an external id, a driver's identifier) is NULL when
// unset, so that a unique index ignores it.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func fromNullDB(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromDB(v.Int64)
	return &t
}

// Permissions are stored as a JSON array of strings.

func encodePermissions(ps fleet.Permissions) (string, error) {
	if ps == nil {
		ps = fleet.Permissions{}
	}
	b, err := json.Marshal([]string(ps))
	if err != nil {
		return "", fmt.Errorf("sqlstore: encode permissions: %w", err)
	}
	return string(b), nil
}

func decodePermissions(b []byte) (fleet.Permissions, error) {
	var ps []string
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("sqlstore: decode permissions: %w", err)
	}
	return fleet.Permissions(ps), nil
}

func hashFromDB(b []byte) ([32]byte, error) {
	var h [32]byte
	if len(b) != len(h) {
		return h, fmt.Errorf("sqlstore: stored hash has %d bytes, want %d", len(b), len(h))
	}
	copy(h[:], b)
	return h, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// queryAll runs query (with ? placeholders) and reads every row with scan:
// the list reads of most tables. doing names the read in its error.
func queryAll[T any](t *tx, doing string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := t.query(t.d.q(query), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, v)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

const accountColumns = `a.id, a.company_name, a.plan, a.rate_limit_override, a.created_at`

func scanAccount(r scanner) (fleet.Account, error) {
	var a fleet.Account
	var plan string
	var override, created int64
	if err := r.Scan(&a.ID, &a.CompanyName, &plan, &override, &created); err != nil {
		return fleet.Account{}, err
	}
	a.Plan, a.RateLimitOverride, a.CreatedAt = fleet.Plan(plan), int(override), fromDB(created)
	return a, nil
}

const keyColumns = `k.id, k.account_id, k.name, k.prefix, k.hash, k.permissions, k.environment,
	k.created_at, k.last_used_at, k.expires_at, k.revoked_at, k.replaces`

// keyRow holds the columns of a key as scanned.
type keyRow struct {
	k                         fleet.Key
	hash, perms               []byte
	created                   int64
	lastUsed, expires, revoke sql.NullInt64
}

func (r *keyRow) dest() []any {
	return []any{&r.k.ID, &r.k.AccountID, &r.k.Name, &r.k.Prefix, &r.hash, &r.perms, &r.k.Environment,
		&r.created, &r.lastUsed, &r.expires, &r.revoke, &r.k.Replaces}
}

func (r *keyRow) key() (fleet.Key, error) {
	var err error
	k := r.k
	if k.Hash, err = hashFromDB(r.hash); err != nil {
		return fleet.Key{}, err
	}
	if k.Permissions, err = decodePermissions(r.perms); err != nil {
		return fleet.Key{}, err
	}
	k.CreatedAt = fromDB(r.created)
	k.LastUsedAt, k.ExpiresAt, k.RevokedAt = fromNullDB(r.lastUsed), fromNullDB(r.expires), fromNullDB(r.revoke)
	return k, nil
}

func scanKey(s scanner) (fleet.Key, error) {
	var r keyRow
	if err := s.Scan(r.dest()...); err != nil {
		return fleet.Key{}, err
	}
	return r.key()
}

// conflict is a conflict error caused by a driver's error (a unique
// constraint), the cause kept for logs.
func conflict(cause error, format string, args ...any) error {
	e := fleet.Errorf(fleet.CodeConflict, format, args...)
	e.Err = cause
	return e
}

// notFound is fleet.NotFound caused by a driver's error (a foreign key).
func notFound(cause error, kind, id string) error {
	e := fleet.NotFound(kind, id)
	e.Err = cause
	return e
}

// wrap says what the store was doing when err happened; nil stays nil, and
// a store fault becomes unavailable (see fault).
func wrap(err error, doing string) error {
	if err == nil {
		return nil
	}
	return fault(fmt.Errorf("sqlstore: %s: %w", doing, err))
}

// attrsArg is a point's attributes in their binary form, NULL when none.
func attrsArg(a fleet.Attributes) any {
	if len(a) == 0 {
		return nil
	}
	b, _ := a.AppendBinary(make([]byte, 0, 8*len(a))) // it cannot fail
	return b
}
