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
	// ActiveKeys is how many active (unrevoked, unexpired) API keys an
	// account may hold at once, so that the per-key allowance cannot be
	// multiplied without end.
	ActiveKeys int
	// StreamsPerKey is how many live streams one key may have open at once.
	StreamsPerKey int
	// AlertRules and Geofences cap what an account holds: every rule,
	// enabled or not (enabling one takes no check), and every geofence.
	// Each location report is judged against the account's enabled rules,
	// which every server compiles and keeps in memory, and a geofence may
	// have up to MaxGeofenceVertices positions; these caps bound both, and
	// the (rule, vehicle) pairs that can open alerts.
	AlertRules int
	Geofences  int
	// Devices caps the trackers and phone apps an account registers
	// (API.md §13).
	Devices int
	// Drivers caps the drivers an account holds (API.md §15), as devices
	// are capped.
	Drivers int
	// PointsPerHour is how many location points an account may store in
	// one fixed hourly window, through the API and from its devices alike;
	// a batch that would pass it is refused whole.
	PointsPerHour int
}

const day = 24 * time.Hour

// Plans is the plan table of the contract.
var plans = map[Plan]PlanLimits{
	PlanFree: {RequestsPerHour: 1_000, HistoryReach: 7 * day, WebhookEndpoints: 0,
		ActiveKeys: 10, StreamsPerKey: 2, AlertRules: 20, Geofences: 20, Devices: 10, Drivers: 10, PointsPerHour: 100_000},
	PlanPro: {RequestsPerHour: 10_000, HistoryReach: 90 * day, WebhookEndpoints: 10,
		ActiveKeys: 100, StreamsPerKey: 10, AlertRules: 200, Geofences: 200, Devices: 1_000, Drivers: 1_000, PointsPerHour: 5_000_000},
	PlanEnterprise: {RequestsPerHour: 100_000, HistoryReach: 365 * day, WebhookEndpoints: 100,
		ActiveKeys: 1_000, StreamsPerKey: 50, AlertRules: 1_000, Geofences: 1_000, Devices: 100_000, Drivers: 100_000, PointsPerHour: 50_000_000},
}

// Plans lists every plan, from the smallest.
func Plans() []Plan { return []Plan{PlanFree, PlanPro, PlanEnterprise} }

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
