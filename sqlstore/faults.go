package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Store faults
//
// A failure of the database itself — unreachable, restarting, out of disk,
// timed out, still in conflict after the retries — is not a bug of the
// request: every such error leaves the store as a *fleet.Error with
// CodeUnavailable (the API's 503 with Retry-After), its cause kept in the
// chain for logs. Faults are told apart by code, never by message text: see
// isFault. Anything else (a constraint the store did not expect, a column
// that does not scan) stays an internal error.

// faultMessage is what a client is told of a store fault.
const faultMessage = "The store is unavailable; retry later."

// fault returns err as an unavailable error when it is a store fault, and
// err as it is otherwise (nil, a fleet error, a bug).
func fault(err error) error {
	if err == nil {
		return nil
	}
	var fe *fleet.Error
	if errors.As(err, &fe) || !isFault(err) {
		return err
	}
	return &fleet.Error{Code: fleet.CodeUnavailable, Message: faultMessage, Err: err}
}

// faultIn is fault for an error of a call whose context ended: when the
// deadline (or cancellation) rolled a transaction back between two
// statements, the next one fails with sql.ErrTxDone, which does not say
// why; the context's error is added to the chain, so that it is a fault.
func faultIn(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	return fault(err)
}

// PostgreSQL SQLSTATE codes and classes that are store faults.
const (
	pgClassConnection   = "08" // connection exception
	pgClassResources    = "53" // insufficient resources: disk full, out of memory, too many connections
	pgClassSystem       = "58" // system error: I/O
	pgQueryCanceled     = "57014"
	pgAdminShutdown     = "57P01"
	pgCrashShutdown     = "57P02"
	pgCannotConnectNow  = "57P03"
	pgReadOnlySQLTx     = "25006" // a standby, or default_transaction_read_only
	pgLockNotAvailable  = "55P03" // lock_timeout
	pgIdleSessionExpiry = "57P05"
)

// isFault reports whether err is a failure of the database rather than of
// the request or of the store's code, from codes only:
//
//   - PostgreSQL SQLSTATE classes 08 (connection), 53 (resources), 58
//     (system), 57014 (statement_timeout), 57P01/57P02/57P03 (shutdown,
//     crash, starting up), 57P05, 25006 (read-only), 55P03 (lock timeout),
//     and 40001/40P01 (serialisation failure, deadlock) once the retries
//     are spent;
//   - SQLite primary result codes SQLITE_BUSY and SQLITE_LOCKED (past the
//     busy timeout), SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY,
//     SQLITE_CANTOPEN, SQLITE_NOMEM, SQLITE_INTERRUPT (a deadline), with
//     their extended codes;
//   - the deadline or cancellation of the call, a connection the driver
//     reports bad or closed (driver.ErrBadConn, sql.ErrConnDone, pgconn's
//     ErrConnClosed, a failed connect), and network errors (net.Error,
//     resets, refused connections, io.EOF on a connection).
func isFault(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgQueryCanceled, pgAdminShutdown, pgCrashShutdown, pgCannotConnectNow, pgIdleSessionExpiry,
			pgReadOnlySQLTx, pgLockNotAvailable, pgSerializationFailure, pgDeadlockDetected:
			return true
		}
		return strings.HasPrefix(pe.Code, pgClassConnection) || strings.HasPrefix(pe.Code, pgClassResources) ||
			strings.HasPrefix(pe.Code, pgClassSystem)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_INTERRUPT:
			return true
		}
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.As(err, &ne) || errors.As(err, &ce) || pgconn.Timeout(err)
}

// bound gives ctx the store's deadline (Options.Timeout) unless it already
// has one as near. Every call into the database runs under it, so that a
// hung database answers with faults instead of piling requests up.
func (sh *shared) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if sh.timeout <= 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= sh.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, sh.timeout)
}
