package fleet_test

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// Several alerts acknowledged at once: the open ones move, each with its
// event; the ones someone acknowledged or resolved meanwhile are left as
// they are and said so; an id that is not the account's changes nothing.
func TestAcknowledgeAlertsAtOnce(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	open := func(msg string) fleet.Alert {
		a, err := m.svc.CreateAlert(ctx, m.p, fleet.Alert{VehicleID: m.v.ID, Message: msg})
		is.NoErr(err)
		return a
	}
	a1, a2, a3, a4 := open("one"), open("two"), open("three"), open("four")
	_, err := m.svc.ResolveAlert(ctx, m.p, a3.ID)
	is.NoErr(err)
	other := newAlerts(t) // another account, on another service: its id is unknown here
	foreign, err := other.svc.CreateAlert(ctx, other.p, fleet.Alert{Message: "theirs"})
	is.NoErr(err)
	mine, err := m.svc.CreateAlert(ctx, fleet.SystemPrincipal(mustAccount(t, m.svc)), fleet.Alert{Message: "another account's"})
	is.NoErr(err)

	// An unknown id, or another account's: not_found, and nothing moved.
	for _, bad := range []string{foreign.ID, mine.ID, "alr_nope"} {
		_, err = m.svc.AcknowledgeAlerts(ctx, m.p, []string{a1.ID, bad})
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	}
	got, err := m.svc.Alert(ctx, m.p, a1.ID)
	is.NoErr(err)
	is.Equal(got.Status, fleet.AlertOpen)
	is.Equal(len(m.events(fleet.EventAlertAcknowledged)), 0)

	// None, or too many: refused.
	_, err = m.svc.AcknowledgeAlerts(ctx, m.p, nil)
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	many := make([]string, fleet.MaxAlertsAtOnce+1)
	for i := range many {
		many[i] = fleet.NewID(fleet.PrefixAlert)
	}
	_, err = m.svc.AcknowledgeAlerts(ctx, m.p, many)
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)

	// A viewer's principal may not.
	viewer := m.p
	viewer.Key.Permissions = fleet.RoleViewer.Permissions()
	_, err = m.svc.AcknowledgeAlerts(ctx, viewer, []string{a1.ID})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)

	_, err = m.svc.AcknowledgeAlert(ctx, m.p, a4.ID) // someone was quicker
	is.NoErr(err)
	out, err := m.svc.AcknowledgeAlerts(ctx, m.p, []string{a1.ID, a2.ID, a3.ID, a4.ID, a1.ID})
	is.NoErr(err)
	is.Equal(len(out.Acknowledged), 2)
	is.Equal(out.Acknowledged[0].ID, a1.ID)
	is.Equal(out.Acknowledged[1].ID, a2.ID)
	is.Equal(out.Acknowledged[0].Status, fleet.AlertAcknowledged)
	is.Equal(*out.Acknowledged[0].AcknowledgedAt, m.clk.Now())
	is.Equal(len(out.Unchanged), 2)
	is.Equal(out.Unchanged[0].Status, fleet.AlertResolved)
	is.Equal(out.Unchanged[1].Status, fleet.AlertAcknowledged)
	is.Equal(len(m.events(fleet.EventAlertAcknowledged)), 3) // one each: a4's, then a1's and a2's
	for _, id := range []string{a1.ID, a2.ID} {
		got, err := m.svc.Alert(ctx, m.p, id)
		is.NoErr(err)
		is.Equal(got.Status, fleet.AlertAcknowledged)
	}
}

func mustAccount(t *testing.T, svc *fleet.Service) fleet.Account {
	t.Helper()
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
