package dashboardtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// Lists show the newest items first, with a count and pages ("Older",
// "Newer"): the overview's open alerts, /alerts, and each webhook
// endpoint's deliveries. Listed oldest first, nothing new ever appeared
// once they had filled up.
func TestListsShowTheNewestFirst(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	ctx := context.Background()
	p := fleet.SystemPrincipal(w.account)
	for i := 1; i <= 75; i++ {
		_, err := w.svc.CreateAlert(ctx, p, fleet.Alert{Type: fleet.AlertCustom, Severity: fleet.SeverityWarning,
			Message: fmt.Sprintf("Door %d open.", i)})
		is.NoErr(err)
	}
	wh, err := w.svc.CreateWebhook(ctx, p, fleet.Webhook{URL: "https://93.184.215.14/fleet", Events: []string{"*"}, Enabled: true, Description: "Ops room"})
	is.NoErr(err)
	var deliveries []string
	for range 25 {
		sent, err := w.svc.TestWebhook(ctx, p, wh.ID)
		is.NoErr(err)
		deliveries = append(deliveries, "delivery-"+sent.Delivery.ID)
	}
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)

	// The overview: the newest 20 open alerts and how many there are.
	page := b.text()
	is.True(strings.Contains(page, "Door 75 open."))
	is.True(strings.Contains(page, "Door 56 open."))
	is.True(!strings.Contains(page, "Door 55 open.")) // 20 of them
	is.True(!strings.Contains(page, "Door 1 open."))
	is.True(strings.Contains(page, "75 open alerts"))

	// /alerts: a page of 50, newest first, then older, then back.
	b.run("open the alerts", chromedp.Navigate(b.base+"/alerts"), chromedp.WaitVisible(row("Door 75 open.")))
	page = b.text()
	is.True(strings.Index(page, "Door 75 open.") < strings.Index(page, "Door 74 open.")) // newest first
	is.True(strings.Contains(page, "Door 26 open."))
	is.True(!strings.Contains(page, "Door 25 open."))
	is.True(strings.Contains(page, "75 open alerts"))
	b.press("see older alerts", link("Older"))
	page = b.text()
	is.True(strings.Contains(page, "Door 1 open."))
	is.True(!strings.Contains(page, "Door 26 open."))
	is.True(!strings.Contains(page, "Older")) // the oldest page
	b.press("back to newer alerts", link("Newer"))
	page = b.text()
	is.True(strings.Contains(page, "Door 26 open."))
	is.True(!strings.Contains(page, "Newer")) // the newest page

	// The deliveries log: each endpoint's newest 20, a count, and pages;
	// each delivery says its event's type.
	listed := func() []string {
		var ids []string
		b.eval("read the deliveries", `[...document.querySelectorAll("tr[id^=delivery-]")].map(r => r.id)`, &ids)
		return ids
	}
	b.run("open the webhooks", chromedp.Navigate(b.base+"/webhooks"), chromedp.WaitVisible(`//tr[@id="`+deliveries[24]+`"]`))
	ids := listed()
	is.Equal(len(ids), 20)
	is.Equal(ids[0], deliveries[24]) // newest first
	is.Equal(ids[19], deliveries[5])
	page = b.text()
	is.True(strings.Contains(page, "25 deliveries"))
	is.True(strings.Contains(page, "webhook.test") && !strings.Contains(page, "evt_"))
	b.press("see older deliveries", link("Older"))
	is.Equal(listed(), []string{deliveries[4], deliveries[3], deliveries[2], deliveries[1], deliveries[0]})
	b.press("back to newer deliveries", link("Newer"))
	is.Equal(listed()[0], deliveries[24])
}
