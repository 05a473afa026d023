package sqlstore

import "context"

// pgWriters is how many of a server's SERIALIZABLE write transactions run
// on PostgreSQL at once; the others wait their turn. Location writes do
// not take these slots: they run in group commits (group_postgres.go),
// and the figures below are from when they did. Transactions that run
// together on the same rows, or on the same index pages (PostgreSQL's
// predicate locks cover a page once they hold a few of its rows), abort
// each other, are run again, and under 32 concurrent single-point reports
// ran out of attempts (a 500); a few at a time keep the database busy with
// far fewer aborts. 8 served 25% more single-point reports a second than 4
// on one server (BenchmarkPostgresIngest), but two servers with 8 each
// aborted each other past their attempts (dozens of 503s a minute at
// 300 reports a second, p99 above 1 s, where 4 each gave p99 60-80 ms).
const pgWriters = 4

// writerGate is a counting semaphore of n slots (newWriterGate).
type writerGate chan struct{}

func newWriterGate(n int) writerGate { return make(writerGate, n) }

func (g writerGate) acquire(ctx context.Context) error {
	select {
	case g <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g writerGate) release() { <-g }
