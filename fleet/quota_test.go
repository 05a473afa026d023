package fleet_test

import (
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestTakeQuotaWindow(t *testing.T) {
	is := is.New(t)
	t0 := time.Date(2026, 11, 22, 10, 20, 30, 500_000_000, time.UTC)
	var s fleet.QuotaState
	var q fleet.Quota
	s, q = fleet.TakeQuota(s, 2, t0)
	is.True(q.Allowed)
	is.True(s.WindowStart.Equal(t0)) // the window starts at the first request
	is.Equal(q.Remaining, 1)
	is.Equal(q.ResetUnix(), t0.Add(time.Hour).Unix()+1) // rounded up to whole seconds
	is.Equal(q.RetryAfter(t0), 3600)
	is.Equal(q.SecondsToReset(t0.Add(59*time.Minute)), 60)

	s, q = fleet.TakeQuota(s, 2, t0.Add(time.Minute))
	is.True(q.Allowed)
	is.Equal(q.Remaining, 0)
	s, q = fleet.TakeQuota(s, 2, t0.Add(59*time.Minute))
	is.True(!q.Allowed)
	is.Equal(s.Count, 2) // refused requests are not counted
	is.Equal(q.RetryAfter(t0.Add(59*time.Minute)), 60)

	// The next window starts at the first request after this one ended, not
	// at the hour boundary.
	s, q = fleet.TakeQuota(s, 2, t0.Add(3*time.Hour+time.Second))
	is.True(q.Allowed)
	is.True(s.WindowStart.Equal(t0.Add(3*time.Hour + time.Second)))
	is.Equal(q.Used, 1)

	_, q = fleet.TakeQuota(s, 0, t0.Add(3*time.Hour+time.Second))
	is.True(!q.Allowed) // a zero allowance admits nothing
	is.Equal(q.RetryAfter(q.Reset.Add(time.Second)), 1)
}

func TestPlanTable(t *testing.T) {
	is := is.New(t)
	is.Equal(fleet.PlanFree.Limits().RequestsPerHour, 1000)
	is.Equal(fleet.PlanPro.Limits().RequestsPerHour, 10000)
	is.Equal(fleet.PlanEnterprise.Limits().RequestsPerHour, 100000)
	is.Equal(fleet.PlanFree.Limits().WebhookEndpoints, 0)
	is.Equal(fleet.PlanEnterprise.Limits().HistoryReach, 365*24*time.Hour)
	is.Equal(fleet.MaxHistoryReach(), 365*24*time.Hour)
	is.Equal(fleet.Account{Plan: fleet.PlanPro, RateLimitOverride: 500}.RateLimitPerHour(), 10000) // only raises
	is.Equal(fleet.Account{Plan: fleet.PlanPro, RateLimitOverride: 50000}.RateLimitPerHour(), 50000)
	is.True(!fleet.Plan("gold").Valid())
}
