package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"
)

// fastConns is the size of a PostgreSQL store's pool for rate limiting and
// the live feed: the quota batcher and the feed's appender each have one
// round trip on its way at a time, whatever the number of requests.
const fastConns = 4

// openFastPostgres opens the pool whose sessions commit without waiting for
// the disk (synchronous_commit off): what it writes, request counts and the
// live feed, may lose its last moments when the database crashes, and is
// never inconsistent.
func openFastPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	return openPostgresPool(ctx, dsn, fastConns, "synchronous_commit", "off")
}

// openSerializablePostgres opens the pool of Update's SERIALIZABLE
// transactions, one connection for each that may run at once (pgWriters).
// Its sessions plan with enable_seqscan off: a SERIALIZABLE transaction
// that scans a table sequentially depends on the whole table, so that any
// concurrent write to it makes one of the two fail; found through an
// index, it depends on the rows and index pages it read. The planner scans
// small tables (a new fleet's vehicles) sequentially, and then two ingests
// of different vehicles aborted each other. Index scans make them
// independent, as they are in larger tables. (Set per session, it costs no
// round trip per transaction, as SET LOCAL did.)
func openSerializablePostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	return openPostgresPool(ctx, dsn, pgWriters, "enable_seqscan", "off")
}

// openPostgresPool opens a pool of n connections whose sessions have the
// run-time parameters set that params names, name then value.
func openPostgresPool(ctx context.Context, dsn string, n int, params ...string) (*sql.DB, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: %w", err)
	}
	q := u.Query()
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: %w", err)
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: postgres: connect: %w", err)
	}
	return db, nil
}
