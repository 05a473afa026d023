package fleet

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// APIVersion is the version of the API this module serves.
const APIVersion = "v1"

// Account is a customer: every other resource belongs to exactly one.
type Account struct {
	ID          string
	CompanyName string
	Plan        Plan
	// RateLimitOverride is the account's own hourly allowance per key, set
	// by the operator ("higher limits on request"); zero means the plan's.
	RateLimitOverride int
	CreatedAt         time.Time
}

// RateLimitPerHour is the hourly allowance of each of the account's keys:
// the plan's, or the account's own limit when that is higher.
func (a Account) RateLimitPerHour() int {
	return max(a.Plan.Limits().RequestsPerHour, a.RateLimitOverride)
}

// PointsPerHour is how many location points the account may store in one
// hourly window (PlanLimits.PointsPerHour): the plan's, raised in
// proportion when the account has its own higher request limit — an
// account allowed twice its plan's requests may store twice its plan's
// points.
func (a Account) PointsPerHour() int {
	l := a.Plan.Limits()
	if a.RateLimitOverride <= l.RequestsPerHour {
		return l.PointsPerHour
	}
	n := int64(l.PointsPerHour) * int64(a.RateLimitOverride) / int64(l.RequestsPerHour)
	return int(min(n, int64(math.MaxInt)))
}

// MaxRateLimit bounds an account's own hourly allowance per key.
const MaxRateLimit = 100_000_000

// Validate checks the fields an operator sets.
func (a Account) Validate() error {
	var v Validator
	name := strings.TrimSpace(a.CompanyName)
	v.Check(name != "" && utf8.RuneCountInString(name) <= 200, "company_name", "must be 1 to 200 characters")
	v.Text("company_name", a.CompanyName)
	v.Check(a.Plan.Valid(), "plan", "must be one of free, pro, enterprise")
	v.Check(a.RateLimitOverride >= 0 && a.RateLimitOverride <= MaxRateLimit, "rate_limit_per_hour", "must be between 0 and %d", MaxRateLimit)
	if a.Plan.Valid() && a.RateLimitOverride > 0 {
		// The account's own limit is a higher limit on request: a lower one
		// would be silently ignored (RateLimitPerHour takes the higher).
		plan := a.Plan.Limits().RequestsPerHour
		v.Check(a.RateLimitOverride > plan, "rate_limit_per_hour",
			"can only raise the %s plan's allowance of %d requests per hour per key", a.Plan, plan)
	}
	return v.Err()
}
