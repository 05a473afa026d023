package fleet

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// The points allowance (API.md §3): how many location points an account
// may store in one hourly window, through the API and from its devices
// alike (Account.PointsPerHour). Every path that stores points goes through
// Service.ingest, which takes the batch's points from the allowance before
// it writes them: a batch that would pass it is refused whole,
// rate_limit_exceeded with the time to the window's end in
// Error.RetryAfter, and stores nothing.
//
// The window is the request allowance's (TakeQuotaN: fixed, an hour from
// the first point after the previous window ended), kept by the store
// under the subject "points:" + the account's id, so that it is exact
// across every server sharing the store, as the request allowance is.
//
// Duplicates (points the vehicle already has at their time) are not
// stored, so they do not consume the allowance: a device resending its
// buffer must not be refused for points it already sent. A batch takes its
// points (after its own repeated timestamps are dropped) before the write
// transaction, and after the commit gives back those it did not store
// (they were stored already) — all of them if the write failed. When the
// take is refused, the batch first counts which of its points its vehicles
// already have, in a read, and takes only the others: a resent buffer of
// stored points takes nothing and is answered as duplicates, however
// little is left.
//
// The take is not counted inside the write transaction, because there it
// would hold the account's count locked for the whole transaction (on
// PostgreSQL serialising every batch of the account, on every server,
// behind one row lock; a transaction run again after a serialisation
// failure would take twice), where outside it is one short atomic
// statement, or a map in memory on SQLite. The price: while a batch is
// being written, points of it that turn out to be stored already hold
// their part of the allowance, so a batch arriving at that moment, near
// the limit, can be refused for points that the first then gives back. It
// can retry; no point is ever stored past the allowance. Points taken by a
// server that then stops before giving them back are lost to the account
// until the window ends, which errs on the side of the other accounts.

// pointsSubject is the quota subject of an account's points allowance.
func pointsSubject(accountID string) string { return "points:" + accountID }

// pointsTake is what a batch took from its account's points allowance.
type pointsTake struct {
	accountID string
	n         int       // the points taken
	reset     time.Time // the end of the window they were taken from
}

// refundTimeout bounds the giving back of points, which does not end with
// the caller's context: the batch is done either way.
const refundTimeout = 10 * time.Second

// takePoints takes the points of batch b (n of them, its own repeats
// dropped) from a's allowance at now, all or none; when they do not fit,
// it takes those its vehicles do not have already, or returns the refusal
// the contract describes.
func (s *Service) takePoints(ctx context.Context, a Account, b *batch, n int, now time.Time) (pointsTake, error) {
	limit := a.PointsPerHour()
	q, err := s.store.TakeQuotaN(ctx, pointsSubject(a.ID), n, limit, now)
	if err != nil {
		return pointsTake{}, err
	}
	if !q.Allowed {
		stored, err := s.storedAlready(ctx, b)
		if err != nil {
			return pointsTake{}, err
		}
		if stored == 0 {
			return pointsTake{}, pointsRefused(a, q, n, now)
		}
		n -= stored
		if q, err = s.store.TakeQuotaN(ctx, pointsSubject(a.ID), n, limit, now); err != nil {
			return pointsTake{}, err
		}
		if !q.Allowed {
			return pointsTake{}, pointsRefused(a, q, n, now)
		}
	}
	return pointsTake{accountID: a.ID, n: n, reset: q.Reset}, nil
}

// storedAlready counts the points of b that its vehicles have already,
// at their timestamps. It reads at most a few times as many points as the
// batch has per vehicle (a batch whose span holds many more stored points
// than it has is rarely a resend), and skips vehicles that are not the
// account's: the write refuses those.
func (s *Service) storedAlready(ctx context.Context, b *batch) (int, error) {
	var n int
	err := s.view(ctx, func(tx Tx) error {
		n = 0
		for _, id := range b.order {
			if _, err := tx.Vehicle(b.accountID, id); ErrorCode(err) == CodeNotFound {
				continue
			} else if err != nil {
				return err
			}
			pts := b.points[id]
			stored, err := tx.Points(id, pts[0].Timestamp, pts[len(pts)-1].Timestamp, 2*len(pts)+100)
			if err != nil {
				return err
			}
			i := 0
			for _, sp := range stored { // both in ascending time
				for i < len(pts) && pts[i].Timestamp.Before(sp.Timestamp) {
					i++
				}
				if i < len(pts) && pts[i].Timestamp.Equal(sp.Timestamp) {
					n++
					i++
				}
			}
		}
		return nil
	})
	return n, err
}

// refundPoints gives back the points of t beyond the stored ones (all of
// them when the batch failed: stored is 0). A failure is logged, not
// returned: the batch is done either way, and the account only has that
// many fewer points for the rest of the window.
func (s *Service) refundPoints(ctx context.Context, t pointsTake, stored int) {
	n := t.n - stored
	if n <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refundTimeout)
	defer cancel()
	if err := s.store.RefundQuota(ctx, pointsSubject(t.accountID), n, t.reset); err != nil {
		s.log.Warn("give back points to the allowance", "account_id", t.accountID, "points", n, "err", err)
	}
}

// pointsRefused is the refusal of a batch of n points that would pass the
// account's allowance, as outcome q of the take describes it.
func pointsRefused(a Account, q Quota, n int, now time.Time) *Error {
	secs := q.RetryAfter(now)
	plan := a.Plan
	if !plan.Valid() {
		plan = PlanFree
	}
	allows := "the " + string(plan) + " plan allows"
	if a.RateLimitOverride > plan.Limits().RequestsPerHour {
		allows = "this account's own limit allows"
	}
	msg := fmt.Sprintf("This account has stored %s location points this hour, the most %s; retry after %d seconds.",
		thousands(q.Used), allows, secs)
	if q.Remaining > 0 {
		msg = fmt.Sprintf("This account has stored %s of the %s location points %s this hour, and this batch's %s would pass that: send at most %s now, or retry after %d seconds.",
			thousands(q.Used), thousands(q.Limit), allows, thousands(n), thousands(q.Remaining), secs)
	}
	return &Error{Code: CodeRateLimitExceeded, Message: msg, RetryAfter: time.Duration(secs) * time.Second}
}

// thousands writes a count with thousands separators: 100000 -> "100,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && s[i-1] != '-' && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
