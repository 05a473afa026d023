package fleet

import (
	"context"
	"errors"
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
// A device's report (DeviceEdge.Report) comes out of the device's own
// allowance too (API.md §3): at most Account.DevicePointsPerHour, a fifth
// of its account's and at least MinDevicePointsPerHour, so that one
// identifier — printed on the tracker's label — cannot spend the
// allowance of every other device and API client of the account. It is
// kept the same way, under the subject "device-points:" + the device's id
// in the same fixed hourly window, exact across servers; a report takes
// from both, the device's first, all or nothing (a report the device's
// allowance refuses takes nothing of the account's; one the account's
// refuses gives the device's back), gives back to both what it did not
// store, and is refused, as the account's refusal is, with the device's
// own message (errDevicePoints in the chain).
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

// Counted with the write-set. A store that applies many batches'
// write-sets together (IngestQuotaStore: sqlstore on PostgreSQL) counts
// the points in the batch's own transaction instead: the batch decides
// what it stores, then hands the takes of exactly its stored points to
// the store with its write-set (IngestWrites.Quota), which counts them,
// all or none, with the rows they are for. A take that does not fit fails
// the write (QuotaRefused), which writes nothing, and the batch is refused
// as above. Duplicates take nothing, and nothing is given back after the
// commit; the store holds the allowance's row only from its count to its
// commit, and one count serves the batches of a group.

// QuotaTake is a take of N units of subject's hourly window under Limit
// at Now, all or none, as Store.TakeQuotaN takes it.
type QuotaTake struct {
	Subject  string
	N, Limit int
	Now      time.Time
}

// QuotaRefused is the error of a write-set whose take (IngestWrites.Quota)
// does not fit: Quota is the subject's window as it stands, Allowed false.
type QuotaRefused struct {
	Subject string
	Quota   Quota
}

func (e *QuotaRefused) Error() string {
	return "fleet: the allowance " + e.Subject + " is spent"
}

// IngestQuotaStore is a store that counts a batch's points allowance with
// its write-set (IngestWrites.Quota) rather than before it (TakeQuotaN).
type IngestQuotaStore interface {
	// TakesQuotaWithIngest reports whether ApplyIngest counts
	// IngestWrites.Quota.
	TakesQuotaWithIngest() bool
}

// pointsWithIngest reports whether a batch's points are counted with its
// write-set (IngestQuotaStore).
func (s *Service) pointsWithIngest() bool {
	st, ok := s.store.(IngestQuotaStore)
	return ok && st.TakesQuotaWithIngest() && !s.opts.IngestOneByOne
}

// pointsTakes are the takes of n stored points of a batch of account a
// (and of its device deviceID unless ""), the device's first.
func pointsTakes(a Account, deviceID string, n int, now time.Time) []QuotaTake {
	if n == 0 {
		return nil
	}
	var out []QuotaTake
	if deviceID != "" {
		out = append(out, QuotaTake{Subject: devicePointsSubject(deviceID), N: n, Limit: a.DevicePointsPerHour(), Now: now})
	}
	return append(out, QuotaTake{Subject: pointsSubject(a.ID), N: n, Limit: a.PointsPerHour(), Now: now})
}

// refusedWithIngest turns a write-set's refused take into the batch's
// refusal of n points; any other error is returned as it is.
func refusedWithIngest(err error, a Account, n int, now time.Time) error {
	var r *QuotaRefused
	if !errors.As(err, &r) {
		return err
	}
	if r.Subject == pointsSubject(a.ID) {
		return pointsRefused(a, r.Quota, n, now)
	}
	return devicePointsRefused(r.Quota, n, now)
}

// pointsSubject is the quota subject of an account's points allowance;
// devicePointsSubject a device's.
func pointsSubject(accountID string) string      { return "points:" + accountID }
func devicePointsSubject(deviceID string) string { return "device-points:" + deviceID }

// MinDevicePointsPerHour is the least points allowance of a device: see
// Account.DevicePointsPerHour.
const MinDevicePointsPerHour = 20_000

// DevicePointsPerHour is how many location points one device of the
// account may store in an hourly window (API.md §3): a fifth of the
// account's allowance (PointsPerHour), at least MinDevicePointsPerHour.
func (a Account) DevicePointsPerHour() int {
	return max(a.PointsPerHour()/5, MinDevicePointsPerHour)
}

// errDevicePoints is in the chain of a report's refusal by its device's
// points allowance (rather than its account's).
var errDevicePoints = errors.New("fleet: the device's points allowance is spent")

// pointsTake is what a batch took from its account's points allowance
// (and its device's, for a device's report).
type pointsTake struct {
	accountID string
	deviceID  string    // "" unless a device's report
	n         int       // the points taken
	reset     time.Time // the end of the account's window they were taken from
	devReset  time.Time // the end of the device's
}

// refundTimeout bounds the giving back of points, which does not end with
// the caller's context: the batch is done either way.
const refundTimeout = 10 * time.Second

// takePoints takes the points of batch b (n of them, its own repeats
// dropped) from a's allowance at now, and from device deviceID's unless
// it is "", all or none; when they do not fit, it takes those its
// vehicles do not have already, or returns the refusal the contract
// describes.
func (s *Service) takePoints(ctx context.Context, a Account, deviceID string, b *batch, n int, now time.Time) (pointsTake, error) {
	t, err := s.takePointsOnce(ctx, a, deviceID, n, now)
	if ErrorCode(err) != CodeRateLimitExceeded {
		return t, err
	}
	stored, serr := s.storedAlready(ctx, b)
	if serr != nil {
		return pointsTake{}, serr
	}
	if stored == 0 {
		return pointsTake{}, err
	}
	return s.takePointsOnce(ctx, a, deviceID, n-stored, now)
}

// takePointsOnce takes n points from the device's allowance (unless
// deviceID is "") and the account's, all or none.
func (s *Service) takePointsOnce(ctx context.Context, a Account, deviceID string, n int, now time.Time) (pointsTake, error) {
	t := pointsTake{accountID: a.ID, deviceID: deviceID, n: n}
	if deviceID != "" {
		q, err := s.store.TakeQuotaN(ctx, devicePointsSubject(deviceID), n, a.DevicePointsPerHour(), now)
		if err != nil {
			return pointsTake{}, err
		}
		if !q.Allowed {
			return pointsTake{}, devicePointsRefused(q, n, now)
		}
		t.devReset = q.Reset
	}
	q, err := s.store.TakeQuotaN(ctx, pointsSubject(a.ID), n, a.PointsPerHour(), now)
	if err == nil && !q.Allowed {
		err = pointsRefused(a, q, n, now)
	}
	if err != nil {
		if deviceID != "" { // all or nothing: the device's go back
			s.refund(ctx, devicePointsSubject(deviceID), n, t.devReset)
		}
		return pointsTake{}, err
	}
	t.reset = q.Reset
	return t, nil
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
	s.refund(ctx, pointsSubject(t.accountID), n, t.reset)
	if t.deviceID != "" {
		s.refund(ctx, devicePointsSubject(t.deviceID), n, t.devReset)
	}
}

// refund gives n units back to subject's window that ends at reset; a
// failure is logged.
func (s *Service) refund(ctx context.Context, subject string, n int, reset time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refundTimeout)
	defer cancel()
	if err := s.store.RefundQuota(ctx, subject, n, reset); err != nil {
		s.log.Warn("give back points to the allowance", "subject", subject, "points", n, "err", err)
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

// devicePointsRefused is the refusal of a device's report of n points
// that would pass the device's allowance, as outcome q of the take
// describes it.
func devicePointsRefused(q Quota, n int, now time.Time) *Error {
	secs := q.RetryAfter(now)
	msg := fmt.Sprintf("This device has stored %s location points this hour, the most one device may (a fifth of its account's points allowance, at least %s); retry after %d seconds.",
		thousands(q.Used), thousands(MinDevicePointsPerHour), secs)
	if q.Remaining > 0 {
		msg = fmt.Sprintf("This device has stored %s of the %s location points one device may store this hour, and this report's %s would pass that; retry after %d seconds.",
			thousands(q.Used), thousands(q.Limit), thousands(n), secs)
	}
	return &Error{Code: CodeRateLimitExceeded, Message: msg, RetryAfter: time.Duration(secs) * time.Second, Err: errDevicePoints}
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
