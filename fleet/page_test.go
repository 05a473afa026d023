package fleet_test

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A list that can go newest first walks back from the newest item by its
// cursors, and EncodeCursor of an item's id leads forward to the newer
// ones; a list that cannot refuses to pretend.
func TestListAlertsNewestFirst(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	var made []string
	for range 5 {
		al, err := svc.CreateAlert(ctx, p, fleet.Alert{Type: fleet.AlertCustom, Severity: fleet.SeverityInfo, Message: "x"})
		is.NoErr(err)
		made = append(made, al.ID)
	}
	ids := func(l fleet.List[fleet.Alert]) []string {
		out := []string{}
		for _, al := range l.Items {
			out = append(out, al.ID)
		}
		return out
	}
	first, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{Status: fleet.AlertOpen}, fleet.ListQuery{Limit: 2, Newest: true})
	is.NoErr(err)
	is.Equal(ids(first), []string{made[4], made[3]})
	is.True(first.HasMore)
	second, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{Limit: 2, Newest: true, Cursor: first.NextCursor})
	is.NoErr(err)
	is.Equal(ids(second), []string{made[2], made[1]})
	last, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{Limit: 2, Newest: true, Cursor: second.NextCursor})
	is.NoErr(err)
	is.Equal(ids(last), []string{made[0]})
	is.True(!last.HasMore)
	newer, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{Limit: 2, Cursor: fleet.EncodeCursor(made[2])})
	is.NoErr(err)
	is.Equal(ids(newer), []string{made[3], made[4]}) // forward from an item, oldest first

	_, err = svc.ListKeys(ctx, p, fleet.ListQuery{Newest: true})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest) // no newest-first order there
}
