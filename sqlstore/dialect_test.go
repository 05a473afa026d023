package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/matryer/is"
)

func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT a FROM t WHERE a = ? AND b > ?", "SELECT a FROM t WHERE a = $1 AND b > $2"},
		{"SELECT '?', \"?\" FROM t WHERE a = ?", "SELECT '?', \"?\" FROM t WHERE a = $1"},
		{"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
	}
	for _, tc := range tests {
		is := is.New(t)
		is.Equal(rebind(tc.in), tc.want)
		is.Equal(newDialect(Postgres).q(tc.in), tc.want) // twice: from the cache
		is.Equal(newDialect(SQLite).q(tc.in), tc.in)     // SQLite keeps ?
	}
}

func TestDDLForPostgres(t *testing.T) {
	is := is.New(t)
	in := "-- a TEXT or BLOB\nCREATE TABLE t (a TEXT PRIMARY KEY, b BLOB NOT NULL, textual TEXT, c INTEGER DEFAULT 'TEXT')"
	want := "-- a TEXT or BLOB\nCREATE TABLE t (a TEXT COLLATE \"C\" PRIMARY KEY, b BYTEA NOT NULL, textual TEXT COLLATE \"C\", c INTEGER DEFAULT 'TEXT')"
	is.Equal(newDialect(Postgres).ddl(in), want) // types rewritten, comments, strings and other words not
	is.Equal(newDialect(SQLite).ddl(in), in)
}

func TestClassifyByCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want errKind
	}{
		{"pg unique", &pgconn.PgError{Code: "23505"}, errUnique},
		{"pg unique wrapped", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"}), errUnique},
		{"pg foreign key", &pgconn.PgError{Code: "23503"}, errForeignKey},
		{"pg serialization", &pgconn.PgError{Code: "40001"}, errRetry},
		{"pg deadlock", &pgconn.PgError{Code: "40P01"}, errRetry},
		{"pg other", &pgconn.PgError{Code: "42P01", Message: "duplicate key value violates unique constraint"}, errOther},
		// Messages are never read: a plain error that reads like one is not one.
		{"message only", errors.New("UNIQUE constraint failed: accounts.id"), errOther},
		{"nil", nil, errOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(classify(tc.err), tc.want)
		})
	}
}

// TestClassifySQLite checks the codes of real SQLite errors.
func TestClassifySQLite(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "x.db")+"?_pragma=foreign_keys(1)")
	is.NoErr(err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE TABLE p (id TEXT PRIMARY KEY, u TEXT UNIQUE);
		CREATE TABLE c (id TEXT PRIMARY KEY, p TEXT REFERENCES p (id))`)
	is.NoErr(err)
	_, err = db.ExecContext(ctx, `INSERT INTO p VALUES ('a', 'x')`)
	is.NoErr(err)

	_, err = db.ExecContext(ctx, `INSERT INTO p VALUES ('a', 'y')`)
	is.Equal(classify(err), errUnique) // primary key
	_, err = db.ExecContext(ctx, `INSERT INTO p VALUES ('b', 'x')`)
	is.Equal(classify(err), errUnique) // unique index
	_, err = db.ExecContext(ctx, `INSERT INTO c VALUES ('c', 'nope')`)
	is.Equal(classify(err), errForeignKey)
	_, err = db.ExecContext(ctx, `INSERT INTO nope VALUES (1)`)
	is.True(err != nil)
	is.Equal(classify(err), errOther) // no such table
}

// TestSQLiteReadersCannotWrite: the read pool refuses writes by itself
// (query_only), not only through the checks of the Tx methods.
func TestSQLiteReadersCannotWrite(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
	is.NoErr(err)
	defer s.Close()
	_, err = s.rdb.ExecContext(ctx, `INSERT INTO accounts (id, company_name, plan, created_at) VALUES ('acc_x', 'X', 'free', 0)`)
	is.True(err != nil) // query-only connection
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO accounts (id, company_name, plan, created_at) VALUES ('acc_x', 'X', 'free', 0)`)
	is.NoErr(err) // the writer writes
}
