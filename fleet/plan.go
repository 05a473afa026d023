package fleet

import "time"

// Plan is a subscription plan. Its limits live in the plan table, Plans.
type Plan string

const (
	PlanFree       Plan = "free"
	PlanPro        Plan = "pro"
	PlanEnterprise Plan = "enterprise"
)

// PlanLimits are what a plan allows.
type PlanLimits struct {
	// RequestsPerHour is the request allowance of each key per hourly window.
	RequestsPerHour int
	// HistoryReach is how far back location history can be read.
	HistoryReach time.Duration
	// WebhookEndpoints is how many webhook endpoints an account may have;
	// zero means the plan has no webhooks.
	WebhookEndpoints int
}

const day = 24 * time.Hour

// Plans is the plan table of the contract.
var plans = map[Plan]PlanLimits{
	PlanFree:       {RequestsPerHour: 1_000, HistoryReach: 7 * day, WebhookEndpoints: 0},
	PlanPro:        {RequestsPerHour: 10_000, HistoryReach: 90 * day, WebhookEndpoints: 10},
	PlanEnterprise: {RequestsPerHour: 100_000, HistoryReach: 365 * day, WebhookEndpoints: 100},
}

// Valid reports whether p is a known plan.
func (p Plan) Valid() bool { _, ok := plans[p]; return ok }

// Limits returns the plan's limits (the free plan's for an unknown plan).
func (p Plan) Limits() PlanLimits {
	if l, ok := plans[p]; ok {
		return l
	}
	return plans[PlanFree]
}

// MaxHistoryReach is the longest history reach of any plan: location points
// older than this are unreachable by everyone and may be purged.
func MaxHistoryReach() time.Duration {
	var m time.Duration
	for _, l := range plans {
		m = max(m, l.HistoryReach)
	}
	return m
}
