package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// takeQuotaPostgres is TakeQuota on PostgreSQL, the one method that every
// request calls, in one transaction of two round trips (pgx pipelines the
// statements of a batch):
//
//  1. BEGIN; SET LOCAL synchronous_commit TO OFF; insert the subject's row
//     if it is missing (ON CONFLICT DO NOTHING); SELECT it FOR UPDATE.
//  2. Apply fleet.TakeQuota in Go; UPDATE the row if the state changed;
//     COMMIT.
//
// The row lock makes concurrent requests of every server take turns, so
// the count is exact. synchronous_commit is off for this transaction only:
// a crash of the database server may forget the last few hundred
// milliseconds of counts (a rate limiter then lets a few more requests
// through), never make them inconsistent; the commit does not wait for a
// disk flush, which would otherwise be most of its cost.
func (s *Store) takeQuotaPostgres(ctx context.Context, subject string, limit int, now time.Time) (fleet.Quota, error) {
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return fleet.Quota{}, err
	}
	defer conn.Close()
	var q fleet.Quota
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		c := sc.Conn()
		var err error
		q, err = takeQuotaPgx(ctx, c, subject, limit, now)
		if err != nil && !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
			// Leave no transaction open on a pooled connection.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, rerr := c.Exec(rctx, "ROLLBACK")
			cancel()
			if rerr != nil {
				return errors.Join(err, driver.ErrBadConn) // the pool drops the connection
			}
		}
		return err
	})
	return q, err
}

func takeQuotaPgx(ctx context.Context, c *pgx.Conn, subject string, limit int, now time.Time) (fleet.Quota, error) {
	zero := fleet.QuotaState{}
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit TO OFF")
	b.Queue("INSERT INTO quotas (subject, window_start, used) VALUES ($1, $2, 0) ON CONFLICT (subject) DO NOTHING",
		subject, toDB(zero.WindowStart))
	b.Queue("SELECT window_start, used FROM quotas WHERE subject = $1 FOR UPDATE", subject)
	var start, used int64
	if err := sendBatch(ctx, c, &b, &start, &used); err != nil {
		return fleet.Quota{}, err
	}

	old := fleet.QuotaState{WindowStart: fromDB(start), Count: int(used)}
	st, q := fleet.TakeQuota(old, limit, now)
	b = pgx.Batch{}
	if st.Count != old.Count || !st.WindowStart.Equal(old.WindowStart) {
		b.Queue("UPDATE quotas SET window_start = $1, used = $2 WHERE subject = $3",
			toDB(st.WindowStart), int64(st.Count), subject)
	}
	b.Queue("COMMIT")
	if err := sendBatch(ctx, c, &b); err != nil {
		return fleet.Quota{}, err
	}
	return q, nil
}

// sendBatch runs the statements of b, scanning the last one's row into
// scan when scan is given.
func sendBatch(ctx context.Context, c *pgx.Conn, b *pgx.Batch, scan ...any) error {
	br := c.SendBatch(ctx, b)
	n := b.Len()
	if len(scan) > 0 {
		n--
	}
	for range n {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
	}
	if len(scan) > 0 {
		if err := br.QueryRow().Scan(scan...); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}
