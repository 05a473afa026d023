package dashboardtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A viewer sets their own notification rule and a scheduled report on the
// Notifications page, by its labels: a mistake is answered beside its
// field with what was typed kept, the rule then saved; the page fits a
// phone.
func TestNotificationsInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		b := open(t, w)
		b.hold(width)
		b.signIn(viewerEmail, viewerPassword)
		b.run("open the notifications", chromedp.Navigate(b.base+"/notifications"), chromedp.WaitVisible(byLabel("Digest window (minutes)")))
		is.True(strings.Contains(b.text(), "No notification rules yet"))

		b.run("fill in a rule with mistakes",
			chromedp.Clear(byLabel("Digest window (minutes)")), chromedp.SendKeys(byLabel("Digest window (minutes)"), "0"),
			chromedp.SendKeys(byLabel("Time zone"), "Mars/Olympus"),
			chromedp.SetValue(byLabel("From"), "22:00"), chromedp.SetValue(byLabel("To"), "07:00"),
		)
		b.press("add it", button("Add rule"))
		var digestError, tzError, tz string
		b.run("read the mistakes", chromedp.Text("#digest_minutes-error", &digestError), chromedp.Text("#quiet_tz-error", &tzError),
			chromedp.Value(byLabel("Time zone"), &tz))
		is.True(strings.HasPrefix(digestError, "Digest window must be from 1 to 1440"))
		is.True(strings.Contains(tzError, "IANA time zone"))
		is.Equal(tz, "Mars/Olympus") // kept
		if width < 800 {
			b.fitsPhone("notifications with mistakes", "Add rule")
		}
		b.shot("notification-mistakes")
		b.run("correct them",
			chromedp.Clear(byLabel("Digest window (minutes)")), chromedp.SendKeys(byLabel("Digest window (minutes)"), "10"),
			chromedp.Clear(byLabel("Time zone")), chromedp.SendKeys(byLabel("Time zone"), "Europe/Berlin"),
		)
		b.press("add it", button("Add rule"))
		is.True(strings.Contains(b.text(), "The rule is saved."))
		l, err := w.svc.ListNotificationRules(context.Background(), fleet.SystemPrincipal(w.account), "", fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		is.Equal(l.Items[0].DigestMinutes, 10)
		is.Equal(l.Items[0].QuietHours.TZ, "Europe/Berlin")

		b.run("schedule a weekly report", chromedp.SetValue(byLabel("Report"), "trips"), chromedp.SetValue(byLabel("How often"), "weekly"),
			chromedp.SetValue(byLabel("Day (weekly)"), "friday"))
		b.press("schedule it", button("Schedule report"))
		is.True(strings.Contains(b.text(), "The report is scheduled."))
		is.True(strings.Contains(b.text(), "trips report, every friday at 07:00 UTC"))
		if width < 800 {
			b.fitsPhone("notifications", "Turn off")
		}
		b.shot("notifications")
		b.cspKept()
	})
}
