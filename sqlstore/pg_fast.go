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
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: %w", err)
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: %w", err)
	}
	db.SetMaxOpenConns(fastConns)
	db.SetMaxIdleConns(fastConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: postgres: connect: %w", err)
	}
	return db, nil
}
