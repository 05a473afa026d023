package fleetweb_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

// Acknowledge selected: the ticked open alerts move at once and the page
// after the redirect is the tab the form was on, saying how many moved and
// how many someone else moved first; with none ticked the page says to
// tick some; a viewer gets no boxes and a forged form changes nothing; an
// alert of another account among the ticked makes the whole form a 404
// and moves none.
func TestAcknowledgeSelected(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, fleetweb.Options{})
	p := fleet.SystemPrincipal(e.accA)
	var ids []string
	for _, msg := range []string{"Door open", "Fuel low", "Tyre pressure", "Harsh braking"} {
		a, err := e.svc.CreateAlert(ctx, p, fleet.Alert{Message: msg})
		is.NoErr(err)
		ids = append(ids, a.ID)
	}
	theirs, err := e.svc.CreateAlert(ctx, fleet.SystemPrincipal(e.accB), fleet.Alert{Message: "Bravo's"})
	is.NoErr(err)
	status := func(id string) fleet.AlertStatus {
		a, err := e.svc.Alert(ctx, p, id)
		is.NoErr(err)
		return a.Status
	}
	acknowledge := func(c *http.Client, ids ...string) resp {
		return do(t, c, "POST", e.srv.URL+"/alerts/acknowledge", url.Values{"alert_id": ids, "back": {"status=open"}})
	}

	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, viewer, "GET", e.srv.URL+"/alerts", nil)
	is.True(strings.Contains(r.body, "Door open"))
	is.True(!strings.Contains(r.body, `type="checkbox"`) && !strings.Contains(r.body, "Acknowledge selected"))
	is.Equal(acknowledge(viewer, ids[0]).status, http.StatusForbidden)
	is.Equal(acknowledge(viewer).status, http.StatusForbidden) // nothing ticked changes nothing either
	is.Equal(status(ids[0]), fleet.AlertOpen)

	admin := e.signedIn(t, "admin@acme.test", adminPassword)
	r = do(t, admin, "GET", e.srv.URL+"/alerts", nil)
	is.Equal(strings.Count(r.body, `form="selected" name="alert_id"`), 4)
	is.True(strings.Contains(r.body, `<label for="select-`+ids[0]+`" class="visually-hidden">Select Custom: Door open</label>`))
	r = acknowledge(admin, ids[0], theirs.ID)
	is.Equal(r.status, http.StatusNotFound)
	is.Equal(status(ids[0]), fleet.AlertOpen) // all or nothing
	r = acknowledge(admin)
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "Tick the alerts to acknowledge first."))

	_, err = e.svc.ResolveAlert(ctx, p, ids[2]) // someone else is quicker
	is.NoErr(err)
	r = acknowledge(admin, ids[0], ids[1], ids[2])
	is.Equal(r.status, http.StatusSeeOther)
	loc, err := url.Parse(r.header.Get("Location"))
	is.NoErr(err)
	is.Equal(loc.Query().Get("status"), "open") // back on the tab
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "2 alerts are acknowledged. 1 was no longer open: someone acknowledged or resolved it first."))
	is.True(strings.Contains(r.body, "1 open alert"))
	is.True(strings.Contains(r.body, "Harsh braking") && !strings.Contains(r.body, "Door open"))
	is.Equal(status(ids[0]), fleet.AlertAcknowledged)
	is.Equal(status(ids[1]), fleet.AlertAcknowledged)
	is.Equal(status(ids[2]), fleet.AlertResolved)
	is.Equal(status(ids[3]), fleet.AlertOpen)
	r = do(t, admin, "GET", e.srv.URL+"/alerts?status=acknowledged", nil)
	is.True(!strings.Contains(r.body, "Acknowledge selected")) // nothing open to select there
}
