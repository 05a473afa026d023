package sqlstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/matryer/is"
)

// Faults are told by code: what the database's failure is, never what its
// message says.
func TestFaultsAreClassifiedByCode(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "anything"} }
	for _, c := range []struct {
		name  string
		err   error
		fault bool
	}{
		{"connection failure 08006", pg("08006"), true},
		{"connection does not exist 08003", pg("08003"), true},
		{"admin shutdown 57P01", pg("57P01"), true},
		{"crash shutdown 57P02", pg("57P02"), true},
		{"cannot connect now 57P03", pg("57P03"), true},
		{"statement timeout 57014", pg("57014"), true},
		{"serialization failure 40001 after retries", pg("40001"), true},
		{"deadlock 40P01 after retries", pg("40P01"), true},
		{"disk full 53100", pg("53100"), true},
		{"too many connections 53300", pg("53300"), true},
		{"I/O error 58030", pg("58030"), true},
		{"read-only transaction 25006", pg("25006"), true},
		{"unique violation 23505", pg("23505"), false},
		{"undefined table 42P01", pg("42P01"), false},
		{"message text alone", errors.New("connection reset by peer"), false},
		{"bad connection", fmt.Errorf("append event: %w", driver.ErrBadConn), true},
		{"conn closed", fmt.Errorf("begin: %w", pgconn.ErrConnClosed), true},
		{"connection done", sql.ErrConnDone, true},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"deadline", context.DeadlineExceeded, true},
		{"no rows", sql.ErrNoRows, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			err := sqlstore.Fault(c.err)
			is.True(errors.Is(err, c.err)) // the cause stays in the chain
			if c.fault {
				is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
				is.Equal(fleethttp.StatusOf(fleet.ErrorCode(err)), http.StatusServiceUnavailable)
			} else {
				is.True(fleet.ErrorCode(err) != fleet.CodeUnavailable)
			}
		})
	}
	is := is.New(t)
	nf := fleet.NotFound("vehicle", "veh_1")
	is.Equal(sqlstore.Fault(nf), error(nf)) // a fleet error stays what it is
	is.NoErr(sqlstore.Fault(nil))
}

// faultEnv is a real server on loopback over a SQLite file, with an
// account (enterprise plan) and one vehicle.
type faultEnv struct {
	path    string
	store   *sqlstore.Store
	srv     *httptest.Server
	key     string
	vehicle string
}

func newFaultEnv(t *testing.T, o sqlstore.Options) *faultEnv {
	t.Helper()
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "fleet.db")
	store, err := sqlstore.OpenWith(ctx, "sqlite:"+path, o)
	is.NoErr(err)
	t.Cleanup(func() { store.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := fleet.NewService(store, fleet.Options{Logger: log})
	srv := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(log)))
	t.Cleanup(srv.Close)
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Full Disk Freight", Plan: fleet.PlanEnterprise})
	is.NoErr(err)
	e := &faultEnv{path: path, store: store, srv: srv, key: nk.Secret}
	status, _, body := e.do(t, "POST", "/v1/vehicles", map[string]any{"name": "Truck 1"})
	is.Equal(status, http.StatusCreated)
	var v struct {
		Data struct {
			VehicleID string `json:"vehicle_id"`
		} `json:"data"`
	}
	is.NoErr(json.Unmarshal(body, &v))
	e.vehicle = v.Data.VehicleID
	return e
}

func (e *faultEnv) do(t *testing.T, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// batch is n points of the vehicle from the first'th millisecond of base.
func batch(first, n int) map[string]any {
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	pts := make([]map[string]any, n)
	for j := range pts {
		pts[j] = map[string]any{"latitude": 52.5, "longitude": 13.4 + float64(first+j)/1e5,
			"timestamp": base.Add(time.Duration(first+j) * time.Millisecond).Format(time.RFC3339Nano)}
	}
	return map[string]any{"locations": pts}
}

// stored is how many points the vehicle's history holds.
func (e *faultEnv) stored(t *testing.T) int {
	t.Helper()
	from := time.Now().UTC().Add(-2 * time.Hour).Format(time.RFC3339)
	status, _, body := e.do(t, "GET", "/v1/vehicles/"+e.vehicle+"/locations?limit=10000&from="+from, nil)
	if status != http.StatusOK {
		t.Fatalf("history: %d %s", status, body)
	}
	var l struct {
		Data []any `json:"data"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatal(err)
	}
	return len(l.Data)
}

// checkUnavailable checks a 503 unavailable answer with Retry-After.
func checkUnavailable(t *testing.T, status int, h http.Header, body []byte) {
	t.Helper()
	is := is.New(t)
	is.Equal(status, http.StatusServiceUnavailable)
	is.True(h.Get("Retry-After") != "")
	is.True(bytes.Contains(body, []byte(`"code":"unavailable"`)))
}

// TestFullSQLiteFileAnswers503: once the file cannot grow (PRAGMA
// max_page_count, as a full disk), a location batch is 503 unavailable with
// Retry-After and none of its points is stored; reads still answer; and
// once there is room again the same batch is accepted whole.
func TestFullSQLiteFileAnswers503(t *testing.T) {
	is := is.New(t)
	e := newFaultEnv(t, sqlstore.Options{})
	status, _, _ := e.do(t, "POST", "/v1/vehicles/"+e.vehicle+"/locations", batch(0, 100))
	is.Equal(status, http.StatusOK) // room to spare
	pages, err := sqlstore.PageCount(ctx, e.store)
	is.NoErr(err)
	is.NoErr(sqlstore.SetMaxPageCount(ctx, e.store, pages)) // full

	status, h, body := e.do(t, "POST", "/v1/vehicles/"+e.vehicle+"/locations", batch(100, 1000))
	checkUnavailable(t, status, h, body)
	is.Equal(e.stored(t), 100) // nothing of the refused batch
	status, _, _ = e.do(t, "GET", "/v1/vehicles/"+e.vehicle, nil)
	is.Equal(status, http.StatusOK) // reads answer

	is.NoErr(sqlstore.SetMaxPageCount(ctx, e.store, 1<<30)) // room again
	status, _, _ = e.do(t, "POST", "/v1/vehicles/"+e.vehicle+"/locations", batch(100, 1000))
	is.Equal(status, http.StatusOK)
	is.Equal(e.stored(t), 1100)
}

// holdWriteLock takes SQLite's write lock on path from a connection of
// another "process" and holds it until the test ends, or until the
// returned function is called.
func holdWriteLock(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_txlock=immediate") // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	release := func() {
		if !done {
			done = true
			tx.Rollback()
			db.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// TestHungDatabaseAnswers503ByTheDeadline: while another process holds
// the file's write lock and never lets go (a hung database, for the
// store), a write is answered 503 unavailable once the store's deadline
// (Options.Timeout) passes — well before SQLite's own busy timeout —, reads
// still answer, and writes succeed once the lock is gone.
func TestHungDatabaseAnswers503ByTheDeadline(t *testing.T) {
	is := is.New(t)
	e := newFaultEnv(t, sqlstore.Options{Timeout: 300 * time.Millisecond})
	release := holdWriteLock(t, e.path)
	start := time.Now()
	status, h, body := e.do(t, "POST", "/v1/vehicles/"+e.vehicle+"/locations", batch(0, 10))
	took := time.Since(start)
	checkUnavailable(t, status, h, body)
	is.True(took < sqlstore.SQLiteBusyTimeout) // the deadline ended it, not SQLite's busy timeout
	status, _, _ = e.do(t, "GET", "/v1/vehicles/"+e.vehicle, nil)
	is.Equal(status, http.StatusOK)
	release()
	status, _, _ = e.do(t, "POST", "/v1/vehicles/"+e.vehicle+"/locations", batch(0, 10))
	is.Equal(status, http.StatusOK)
	is.Equal(e.stored(t), 10)
}

// TestSQLiteBusyPastItsTimeoutAnswers503: with no deadline of the store's,
// a write lock held past SQLite's busy timeout gives SQLITE_BUSY, which is
// 503 unavailable.
func TestSQLiteBusyPastItsTimeoutAnswers503(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for SQLite's busy timeout")
	}
	e := newFaultEnv(t, sqlstore.Options{})
	holdWriteLock(t, e.path)
	status, h, body := e.do(t, "POST", "/v1/vehicles", map[string]any{"name": "Truck 2"})
	checkUnavailable(t, status, h, body)
}

// TestHungPostgresAnswersUnavailable: on a private PostgreSQL cluster, the
// store's deadline is the connections' statement_timeout, and a table
// locked by another session (a database that does not answer, for the
// store) fails a call as unavailable at the deadline instead of waiting.
func TestHungPostgresAnswersUnavailable(t *testing.T) {
	is := is.New(t)
	cluster := pgtest.NewCluster(t)
	store, err := sqlstore.OpenWith(ctx, cluster.DSN, sqlstore.Options{Timeout: 700 * time.Millisecond})
	is.NoErr(err)
	defer store.Close()
	v, err := sqlstore.Setting(ctx, store, "statement_timeout")
	is.NoErr(err)
	is.Equal(v, "700ms")
	a := storetest.MustAccount(t, store)

	locker, err := sql.Open("pgx", cluster.DSN)
	is.NoErr(err)
	defer locker.Close()
	ltx, err := locker.BeginTx(ctx, nil)
	is.NoErr(err)
	defer ltx.Rollback()
	_, err = ltx.ExecContext(ctx, "LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE")
	is.NoErr(err)

	start := time.Now()
	err = store.View(context.Background(), func(tx fleet.Tx) error { _, err := tx.Account(a.ID); return err })
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	is.True(time.Since(start) < 10*time.Second) // the deadline ended it
	is.NoErr(ltx.Rollback())
	is.NoErr(store.View(context.Background(), func(tx fleet.Tx) error { _, err := tx.Account(a.ID); return err }))
}

// A call whose context ends between two statements of its transaction
// (the deadline passed while the service worked) fails as unavailable,
// whether the next statement sees the context's end or the transaction
// already rolled back (sql.ErrTxDone).
func TestContextEndedMidTransactionIsUnavailable(t *testing.T) {
	is := is.New(t)
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
	is.NoErr(err)
	defer store.Close()
	a := storetest.MustAccount(t, store)
	for range 20 {
		cctx, cancel := context.WithCancel(context.Background())
		err := store.Update(cctx, func(tx fleet.Tx) error {
			if _, err := tx.Account(a.ID); err != nil {
				return err
			}
			cancel()
			_, err := tx.Account(a.ID)
			return err
		})
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	}
}
