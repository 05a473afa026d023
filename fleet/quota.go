package fleet

import "time"

// QuotaWindow is the length of a rate-limit window.
const QuotaWindow = time.Hour

// QuotaState is what a store keeps per rate-limited subject (a key id, or a
// client address for requests without a valid key).
type QuotaState struct {
	WindowStart time.Time
	Count       int
}

// Quota is the outcome of taking one request from a subject's allowance.
type Quota struct {
	Allowed   bool
	Limit     int
	Remaining int
	Used      int
	Reset     time.Time // when the window ends
}

// SecondsToReset is the whole number of seconds, rounded up, until the
// window resets (0 once it has).
func (q Quota) SecondsToReset(now time.Time) int {
	return max(0, ceilSeconds(q.Reset.Sub(now)))
}

// RetryAfter is the whole number of seconds, at least 1, until the window
// resets.
func (q Quota) RetryAfter(now time.Time) int {
	return max(1, ceilSeconds(q.Reset.Sub(now)))
}

// ResetUnix is the Unix time in whole seconds, rounded up, at which the
// window ends (what X-RateLimit-Reset carries).
func (q Quota) ResetUnix() int64 {
	s := q.Reset.Unix()
	if q.Reset.Nanosecond() > 0 {
		s++
	}
	return s
}

func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// TakeQuota is the quota window arithmetic every store applies atomically:
// a fixed one-hour window per subject that starts at the first request after
// the previous window ended. A request within the allowance is counted; one
// over it is refused and not counted. It returns the new state and the
// outcome.
func TakeQuota(s QuotaState, limit int, now time.Time) (QuotaState, Quota) {
	return TakeQuotaN(s, 1, limit, now)
}

// TakeQuotaN is TakeQuota for n units at once, all or none (the points of
// a location batch): the window rolls over as TakeQuota rolls it; then, if
// the window's count plus n is within limit, all n are counted and the
// outcome is allowed, and otherwise none is counted and it is refused.
// Used and Remaining describe the window after the take.
func TakeQuotaN(s QuotaState, n, limit int, now time.Time) (QuotaState, Quota) {
	if s.WindowStart.IsZero() || !now.Before(s.WindowStart.Add(QuotaWindow)) {
		s = QuotaState{WindowStart: now}
	}
	q := Quota{Limit: limit, Reset: s.WindowStart.Add(QuotaWindow)}
	if n <= limit-s.Count {
		s.Count += n
		q.Allowed = true
	}
	q.Used = s.Count
	q.Remaining = max(0, limit-s.Count)
	return s, q
}

// RefundQuota gives n units taken by TakeQuotaN back to the window that
// ends at reset (the take's Quota.Reset), so that they can be taken again:
// units taken for work that was then not done. When the state holds
// another window (that one ended and a new one began), nothing changes: a
// window that has ended counts for nothing any more. The count never goes
// below zero.
func RefundQuota(s QuotaState, n int, reset time.Time) QuotaState {
	if n > 0 && !s.WindowStart.IsZero() && s.WindowStart.Add(QuotaWindow).Equal(reset) {
		s.Count = max(0, s.Count-n)
	}
	return s
}
