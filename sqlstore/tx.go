package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// tx is the fleet.Tx of one Update or View. Its statements run with the
// context given to Update or View.
type tx struct {
	ctx context.Context
	// stop, when set, is the caller's context while ctx is its values
	// without its cancellation: a group commit's member (group.go) checks
	// it before each statement instead of having SQLite interrupt one.
	stop     context.Context
	d        *dialect
	tx       *sql.Tx
	readOnly bool
	// retry is set when a statement failed because the database aborted the
	// transaction to keep it serialisable: running it again may succeed.
	retry bool
	// savepoints counts the savepoints taken, to name them apart.
	savepoints int
	// claim is the store's prepared claim statements (writer only).
	claim *claimStmts
	// stmts is the pool's statement cache; nil on PostgreSQL (pgx keeps
	// its own).
	stmts *stmtCache
	// cache is the writer's row cache (rowcache.go), set for a group
	// member's transaction on SQLite; keeps holds the cached tables whose
	// statements now run in a method that keeps the cache up to date
	// itself (keeping).
	cache *rowCache
	keeps tableSet
	// lockRows is set for a PostgreSQL group member's transaction, which
	// runs at READ COMMITTED (group_postgres.go): the reads on which a
	// write depends lock their rows (a vehicle FOR UPDATE, the account's
	// alert configuration FOR SHARE), so that the members of two groups
	// that write the same rows take turns.
	lockRows bool
	// locked holds the vehicles the member's group has locked already
	// (lockVehicles): reading one needs no lock of its own.
	locked map[string]bool
	// roundTrips counts the round trips the transaction sends (roundtrips.go),
	// or is nil.
	roundTrips *roundTrips
	// stage, set for a member of a PostgreSQL group in write-set mode
	// (group_writes.go), gathers its write-sets (ApplyIngest).
	stage *memberWrites
	// lazy, when set, takes the member's savepoint: called (once) before
	// the first statement that writes (beforeWrite).
	lazy func() error
}

// beforeWrite takes the member's savepoint before its first statement
// that may write or lock rows (anything but a plain SELECT) in a group of
// write-sets, so that rolling the member back releases what it locked.
func (t *tx) beforeWrite(query string) error {
	if t.lazy == nil || isSelect(query) {
		return nil
	}
	lazy := t.lazy
	t.lazy = nil
	return lazy()
}

// isSelect reports whether query is a SELECT that neither writes nor
// locks rows.
func isSelect(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	if len(q) < 6 || !strings.EqualFold(q[:6], "select") {
		return false
	}
	u := strings.ToUpper(q)
	return !strings.Contains(u, "FOR UPDATE") && !strings.Contains(u, "FOR SHARE")
}

var errReadOnly = errors.New("sqlstore: write in a read-only transaction")

// The statement paths. A transaction runs its statements through exec,
// query, queryRow and prepared (or prepare), and each runs guard first;
// t.tx is used directly only for transaction control (SAVEPOINT, SET
// LOCAL).

// guard keeps the row cache true before a statement runs: when the
// statement writes a cached table (writtenTables) other than those of the
// keeping method it runs in, the cache is emptied.
func (t *tx) guard(query string) {
	if t.cache == nil {
		return
	}
	if t.cache.writes(query)&^t.keeps != 0 {
		t.cache.reset()
		t.cache.guarded.Add(1)
	}
}

// keeping runs fn, whose statements write the cached tables in tables and
// whose method keeps the row cache up to date with them itself.
func (t *tx) keeping(tables tableSet, fn func() error) error {
	outer := t.keeps
	t.keeps = tables
	defer func() { t.keeps = outer }()
	return fn()
}

// stmt returns the transaction's form of query's prepared statement, or
// nil.
func (t *tx) stmt(query string) *sql.Stmt {
	st := t.stmts.get(query)
	if st == nil {
		return nil
	}
	return t.tx.StmtContext(t.ctx, st)
}

// stopped returns the error of a member's context that is done (see
// tx.stop).
func (t *tx) stopped() error {
	if t.stop == nil {
		return nil
	}
	return t.stop.Err()
}

// exec runs a statement (its placeholders in the dialect's form).
func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	if err := t.stopped(); err != nil {
		return nil, err
	}
	if err := t.beforeWrite(query); err != nil {
		return nil, err
	}
	t.guard(query)
	t.roundTrips.add(tripStatement)
	if st := t.stmt(query); st != nil {
		return st.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

// query runs a query (its placeholders in the dialect's form).
func (t *tx) query(query string, args ...any) (*sql.Rows, error) {
	if err := t.stopped(); err != nil {
		return nil, err
	}
	if err := t.beforeWrite(query); err != nil {
		return nil, err
	}
	t.guard(query)
	t.roundTrips.add(tripStatement)
	if st := t.stmt(query); st != nil {
		return st.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, query, args...)
}

// queryRow runs a query that returns one row (written with ? placeholders).
func (t *tx) queryRow(query string, args ...any) *sql.Row {
	q := t.d.q(query)
	if t.stopped() != nil {
		return t.tx.QueryRowContext(t.stop, q, args...) // carries the context's error
	}
	t.beforeWrite(q) // a failure breaks the transaction, and the statement's error tells
	t.guard(q)
	t.roundTrips.add(tripStatement)
	if st := t.stmt(q); st != nil {
		return st.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, q, args...)
}

// preparedStmt is a statement the store prepared on a pool, with its text
// for the guard.
type preparedStmt struct {
	*sql.Stmt
	query string
}

// prepare prepares query on db.
func (p *preparedStmt) prepare(ctx context.Context, db *sql.DB, query string) error {
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	p.Stmt, p.query = st, query
	return nil
}

// prepared returns the transaction's form of p.
func (t *tx) prepared(p preparedStmt) *sql.Stmt {
	t.beforeWrite(p.query) // a failure breaks the transaction, and the statement's error tells
	t.guard(p.query)
	return t.tx.StmtContext(t.ctx, p.Stmt)
}

// prepare prepares query (its placeholders in the dialect's form) for the
// transaction, to run it many times; the caller closes it.
func (t *tx) prepare(query string) (*sql.Stmt, error) {
	if err := t.beforeWrite(query); err != nil {
		return nil, err
	}
	t.guard(query)
	return t.tx.PrepareContext(t.ctx, query)
}

// failed notes what a failed statement means for the transaction and
// returns err.
func (t *tx) failed(err error) error {
	if classify(err) == errRetry {
		t.retry = true
	}
	return err
}

// insert runs a statement that may violate a constraint. A violation fails
// the statement only, never the transaction, on both dialects (see
// savepoint). So fn may go on after a conflict, as it can with memstore.
func (t *tx) insert(query string, args ...any) error {
	return t.savepoint(func() error {
		_, err := t.exec(t.d.q(query), args...)
		return t.failed(err)
	})
}

// savepoint runs write statements so that their failure fails them only:
// PostgreSQL would abort the whole transaction, so there they run inside a
// savepoint that is rolled back on error (SQLite undoes a failed statement
// by itself).
func (t *tx) savepoint(fn func() error) error {
	if t.readOnly {
		return errReadOnly
	}
	if !t.d.abortsOnError {
		return fn()
	}
	if err := t.beforeWrite("SAVEPOINT"); err != nil {
		return t.failed(err)
	}
	t.savepoints++
	sp := fmt.Sprintf("sp%d", t.savepoints)
	t.roundTrips.add(tripSavepoint)
	if _, err := t.tx.ExecContext(t.ctx, "SAVEPOINT "+sp); err != nil {
		return t.failed(err)
	}
	if err := fn(); err != nil {
		t.roundTrips.add(tripSavepoint)
		if _, rerr := t.tx.ExecContext(t.ctx, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
			return t.failed(errors.Join(err, rerr))
		}
		return err
	}
	t.roundTrips.add(tripSavepoint)
	_, err := t.tx.ExecContext(t.ctx, "RELEASE SAVEPOINT "+sp)
	return t.failed(err)
}

// update runs a write statement and returns how many rows it changed.
func (t *tx) update(query string, args ...any) (int64, error) {
	if t.readOnly {
		return 0, errReadOnly
	}
	res, err := t.exec(t.d.q(query), args...)
	if err != nil {
		return 0, t.failed(err)
	}
	return res.RowsAffected()
}

// CreateAccount implements fleet.Tx.
func (t *tx) CreateAccount(a fleet.Account) error {
	err := t.insert(`INSERT INTO accounts (id, company_name, plan, rate_limit_override, created_at)
		VALUES (?, ?, ?, ?, ?)`,
		a.ID, a.CompanyName, string(a.Plan), int64(a.RateLimitOverride), toDB(a.CreatedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "An account with id %q exists.", a.ID)
	}
	return wrap(err, "create account")
}

// Account implements fleet.Tx.
func (t *tx) Account(id string) (fleet.Account, error) {
	a, err := scanAccount(t.queryRow(`SELECT `+accountColumns+` FROM accounts a WHERE a.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Account{}, fleet.NotFound("account", id)
	}
	return a, wrap(t.failed(err), "read account")
}

// Accounts implements fleet.Tx.
func (t *tx) Accounts(p fleet.Page) ([]fleet.Account, error) {
	out := []fleet.Account{}
	if p.Limit <= 0 {
		return out, nil
	}
	rows, err := t.query(t.d.q(`SELECT `+accountColumns+` FROM accounts a
		WHERE a.id > ? ORDER BY a.id LIMIT ?`), p.After, int64(p.Limit))
	if err != nil {
		return nil, wrap(t.failed(err), "list accounts")
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, wrap(err, "list accounts")
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(t.failed(err), "list accounts")
	}
	return out, nil
}

// CreateKey implements fleet.Tx.
func (t *tx) CreateKey(k fleet.Key) error {
	perms, err := encodePermissions(k.Permissions)
	if err != nil {
		return err
	}
	err = t.insert(`INSERT INTO api_keys (id, account_id, name, prefix, hash, permissions, environment,
			created_at, last_used_at, expires_at, revoked_at, replaces)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.AccountID, k.Name, k.Prefix, k.Hash[:], perms, k.Environment,
		toDB(k.CreatedAt), toNullDB(k.LastUsedAt), toNullDB(k.ExpiresAt), toNullDB(k.RevokedAt), k.Replaces)
	switch classify(err) {
	case errUnique:
		return conflict(err, "An API key with this id or secret exists.")
	case errForeignKey:
		return notFound(err, "account", k.AccountID)
	}
	return wrap(err, "create key")
}

// Key implements fleet.Tx.
func (t *tx) Key(accountID, id string) (fleet.Key, error) {
	k, err := scanKey(t.queryRow(`SELECT `+keyColumns+` FROM api_keys k WHERE k.id = ? AND k.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Key{}, fleet.NotFound("API key", id)
	}
	return k, wrap(t.failed(err), "read key")
}

// KeyByID implements fleet.Tx.
func (t *tx) KeyByID(id string) (fleet.Key, error) {
	k, err := scanKey(t.queryRow(`SELECT `+keyColumns+` FROM api_keys k WHERE k.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Key{}, fleet.NotFound("API key", id)
	}
	return k, wrap(t.failed(err), "read key")
}

// Keys implements fleet.Tx.
func (t *tx) Keys(accountID string, p fleet.Page) ([]fleet.Key, error) {
	out := []fleet.Key{}
	if p.Limit <= 0 {
		return out, nil
	}
	rows, err := t.query(t.d.q(`SELECT `+keyColumns+` FROM api_keys k
		WHERE k.account_id = ? AND k.id > ? ORDER BY k.id LIMIT ?`), accountID, p.After, int64(p.Limit))
	if err != nil {
		return nil, wrap(t.failed(err), "list keys")
	}
	defer rows.Close()
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, wrap(err, "list keys")
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(t.failed(err), "list keys")
	}
	return out, nil
}

// CountActiveKeys implements fleet.Tx.
func (t *tx) CountActiveKeys(accountID string, now time.Time) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM api_keys
		WHERE account_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`,
		accountID, toDB(now)).Scan(&n)
	return n, wrap(t.failed(err), "count active keys")
}

// UpdateKey implements fleet.Tx.
func (t *tx) UpdateKey(k fleet.Key) error {
	n, err := t.update(`UPDATE api_keys SET name = ?, expires_at = ?, revoked_at = ?
		WHERE id = ? AND account_id = ?`,
		k.Name, toNullDB(k.ExpiresAt), toNullDB(k.RevokedAt), k.ID, k.AccountID)
	if err != nil {
		return wrap(err, "update key")
	}
	if n == 0 {
		return fleet.NotFound("API key", k.ID)
	}
	return nil
}
