package dashboardtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// Several alerts acknowledged at once: ticked by their labels (or all at
// once with the page's box), then Acknowledge selected; the page after
// says how many, and keeps the tab. A viewer gets no boxes.
func TestAcknowledgeSelectedInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		for _, msg := range []string{"Door open at the depot.", "Fuel card declined.", "Tyre pressure low.", "Harsh braking."} {
			_, err := w.svc.CreateAlert(ctx, p, fleet.Alert{VehicleID: w.vehicle.ID, Message: msg, Severity: fleet.SeverityWarning})
			is.NoErr(err)
		}
		b := open(t, w)
		b.hold(width)
		b.signIn(viewerEmail, viewerPassword)
		b.run("open the alerts as a viewer", chromedp.Navigate(b.base+"/alerts"), chromedp.WaitVisible(row("Harsh braking.")))
		var boxes int
		b.eval("count the boxes", `document.querySelectorAll("main input[type=checkbox]").length`, &boxes)
		is.Equal(boxes, 0)
		is.True(!strings.Contains(b.text(), "Acknowledge selected"))
		b.signOut()

		b.signIn(adminEmail, adminPassword)
		b.run("open the alerts", chromedp.Navigate(b.base+"/alerts"), chromedp.WaitVisible(row("Harsh braking.")))
		if width < 800 {
			b.fitsPhone("alerts", "Acknowledge selected", "Acknowledge", "Resolve")
		}
		b.run("tick two", chromedp.Click(byLabel("Select Custom on Truck 7: Door open at the depot.")),
			chromedp.Click(byLabel("Select Custom on Truck 7: Tyre pressure low.")))
		var counted string
		b.run("read the count", chromedp.Text("#selected-count", &counted))
		is.Equal(counted, "2 selected")
		b.press("acknowledge them", button("Acknowledge selected"))
		page := b.text()
		is.True(strings.Contains(page, "2 alerts are acknowledged."))
		is.True(strings.Contains(page, "2 open alerts"))
		is.True(!strings.Contains(page, "Door open at the depot.") && !strings.Contains(page, "Tyre pressure low."))
		is.True(strings.Contains(b.url(), "status=open"))

		// The page's box ticks the rest.
		b.run("tick every one", chromedp.Click(byLabel("Select every open alert of this page")))
		b.run("read the count", chromedp.Text("#selected-count", &counted))
		is.Equal(counted, "2 selected")
		b.press("acknowledge them", button("Acknowledge selected"))
		is.True(strings.Contains(b.text(), "No open alerts."))
		l, err := w.svc.ListAlerts(ctx, p, fleet.AlertFilter{Status: fleet.AlertAcknowledged}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 4)
		b.cspKept()
	})
}

// Webhook endpoints managed from the dashboard: added (the signing secret
// shown once), sent a test event whose delivery fails and is retried,
// disabled and enabled, its secret rotated, and deleted after a
// confirmation.
func TestWebhooksInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serveWith(t, setup{insecureWebhooks: true})
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		broken := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.WriteHeader(http.StatusServiceUnavailable)
		}))
		t.Cleanup(broken.Close)
		sender := fleethttp.NewSender(w.svc, fleethttp.SenderOptions{Insecure: true})
		b := open(t, w)
		b.hold(width)
		b.signIn(adminEmail, adminPassword)

		b.run("fill in an endpoint", chromedp.Navigate(b.base+"/webhooks"), chromedp.WaitVisible(byLabel("Endpoint URL")),
			chromedp.SendKeys(byLabel("Endpoint URL"), broken.URL+"/fleet"),
			chromedp.SendKeys(byLabel("Description (optional)"), "Dispatch board"),
			chromedp.Click(byLabel("Every event")), // off: only the two below
			chromedp.Click(byLabel("alert.created")), chromedp.Click(byLabel("trip.completed")))
		b.press("add it", button("Add endpoint"))
		var secret string
		b.run("read the secret", chromedp.Value(byLabel("The signing secret"), &secret))
		is.True(strings.HasPrefix(secret, "whsec_"))
		l, err := w.svc.ListWebhooks(ctx, p, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		wh := l.Items[0]
		is.Equal(wh.Events, []string{"alert.created", "trip.completed"})
		b.run("reload", chromedp.Reload(), chromedp.WaitVisible(byLabel("Endpoint URL")))
		is.True(!strings.Contains(b.text(), secret)) // once

		// A test event, which the endpoint refuses: retrying, and why.
		b.press("send a test", button("Send a test event"))
		is.True(strings.Contains(b.text(), "A test event is on its way to "+broken.URL+"/fleet"))
		_, err = sender.RunOnce(ctx)
		is.NoErr(err)
		b.run("see the delivery", chromedp.Reload(), chromedp.WaitVisible(row("retrying")))
		var delivery string
		b.run("read the delivery", chromedp.Text(row("retrying"), &delivery))
		for _, want := range []string{"webhook.test", "1 of 10", "503", "The endpoint answered 503.", "retried at "} {
			if !strings.Contains(delivery, want) {
				t.Errorf("the failed delivery lacks %q: %s", want, delivery)
			}
		}
		if width < 800 {
			b.fitsPhone("webhooks", "Send a test event", "Disable", "Rotate secret", "Delete…")
		}
		b.shot("webhooks")

		// Disable, enable.
		b.press("disable it", button("Disable"))
		is.True(strings.Contains(b.text(), broken.URL+"/fleet is disabled"))
		got, err := w.svc.Webhook(ctx, p, wh.ID)
		is.NoErr(err)
		is.True(!got.Enabled)
		b.press("enable it", button("Enable"))
		got, _ = w.svc.Webhook(ctx, p, wh.ID)
		is.True(got.Enabled)

		// A new secret, once.
		var rotated string
		b.press("rotate the secret", button("Rotate secret"))
		b.run("read the new secret", chromedp.Value(byLabel("The signing secret"), &rotated))
		is.True(strings.HasPrefix(rotated, "whsec_") && rotated != secret)

		// Delete, after a confirmation.
		b.press("delete it", link("Delete…"))
		b.run("read the question", chromedp.WaitVisible(button("Delete the endpoint")))
		is.True(strings.Contains(b.text(), "its deliveries log is deleted with it"))
		b.shot("webhook-delete")
		b.press("confirm", button("Delete the endpoint"))
		page := b.text()
		is.True(strings.Contains(page, broken.URL+"/fleet is deleted, with its deliveries log."))
		is.True(strings.Contains(page, "No webhook endpoints yet."))
		l, err = w.svc.ListWebhooks(ctx, p, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 0)
		b.cspKept()

		// A viewer sees endpoints and changes nothing.
		_, err = w.svc.CreateWebhook(ctx, p, fleet.Webhook{URL: broken.URL + "/other", Events: []string{"*"}, Enabled: true})
		is.NoErr(err)
		b.signOut()
		b.signIn(viewerEmail, viewerPassword)
		b.run("open the webhooks as a viewer", chromedp.Navigate(b.base+"/webhooks"), waitText(broken.URL+"/other"))
		page = b.text()
		for _, never := range []string{"Send a test event", "Disable", "Rotate secret", "Delete…", "Add an endpoint"} {
			if strings.Contains(page, never) {
				t.Errorf("a viewer is offered %q", never)
			}
		}
	})
}
