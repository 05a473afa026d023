package dashboardtest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// keyCount is how many keys the world's account has, whatever their status.
func (w *world) keyCount(t *testing.T) int {
	t.Helper()
	l, err := w.svc.Operator().Keys(context.Background(), w.account.ID, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

// Reloading the page that shows a new key, a rotated key or a sign-in
// link makes nothing again: every form is posted, then redirected, and the
// secret is shown once on the page the redirect leads to.
func TestReloadRepeatsNothing(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)
	n := w.keyCount(t)

	secret := b.generateKey("Reload test")
	is.True(fleet.CheckSecret(secret))
	is.Equal(w.keyCount(t), n+1)
	tryIt := strings.Contains(b.text(), "export FLEET_API_KEY=")
	b.run("reload the page", chromedp.Reload(), chromedp.WaitVisible(byLabel("Name")))
	is.Equal(w.keyCount(t), n+1) // no second key
	page := b.text()
	is.True(strings.Contains(page, "shown once"))
	is.True(!strings.Contains(page, secret)) // and the secret is gone
	is.True(strings.Contains(page, "Reload test"))
	is.True(tryIt) // the "Try it" line said how to set the variable it uses

	b.press("rotate the key", row(secret[:fleet.KeyPrefixLen])+button("Rotate"))
	b.run("see the new key", chromedp.WaitVisible(byLabel("The new API key")))
	is.Equal(w.keyCount(t), n+2)
	b.run("reload the rotation", chromedp.Reload(), chromedp.WaitVisible(byLabel("Name")))
	is.Equal(w.keyCount(t), n+2) // no second rotation

	var link string
	b.run("fill in a person",
		chromedp.Navigate(b.base+"/users"),
		chromedp.WaitVisible(byLabel("E-mail address")),
		chromedp.SendKeys(byLabel("E-mail address"), "nia@acme.test"),
		chromedp.SendKeys(byLabel("Name (optional)"), "Nia"),
	)
	b.press("add her", button("Add and make a sign-in link"))
	b.run("read her link", chromedp.Value(byLabel("One-time sign-in link"), &link))
	is.True(strings.Contains(link, "/welcome?token="))
	b.shot("users")
	b.run("reload the link's page", chromedp.Reload(), chromedp.WaitVisible(byLabel("E-mail address")))
	page = b.text()
	is.True(strings.Contains(page, "shown once"))
	is.True(!strings.Contains(page, link))
	is.True(!strings.Contains(page, "exists")) // no second attempt to add her
}

// /login, the product's own words, leads to the sign-in page, and next
// survives the detour.
func TestLoginLeadsToSignIn(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	b := open(t, w)
	b.run("open /login", chromedp.Navigate(b.base+"/login?next="+url.QueryEscape("/alerts")),
		chromedp.WaitVisible(`//h1[normalize-space()="Sign in"]`))
	u, err := url.Parse(b.url())
	is.NoErr(err)
	is.Equal(u.Path, "/sign-in")
	is.Equal(u.Query().Get("next"), "/alerts")
	b.shot("sign-in")
	b.run("fill in the form",
		chromedp.SendKeys(byLabel("E-mail address"), adminEmail),
		chromedp.SendKeys(byLabel("Password"), adminPassword),
	)
	b.press("sign in", button("Sign in"))
	b.run("see the alerts", chromedp.WaitVisible(`//h1[normalize-space()="Alerts"]`))
}

// A form's errors read as sentences about its fields, not as the API's
// field names.
func TestFormErrorsReadAsSentences(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)
	n := w.keyCount(t)
	b.fillKey("   ") // a blank name
	b.press("generate it", button("Generate key"))
	page := b.text()
	is.True(strings.Contains(page, "Name must be 1 to 100 characters."))
	is.True(!strings.Contains(page, "name must"))
	is.Equal(w.keyCount(t), n) // nothing made
	b.run("give a wrong current password",
		chromedp.Navigate(b.base+"/settings/password"),
		chromedp.WaitVisible(byLabel("Current password")),
		chromedp.SendKeys(byLabel("Current password"), "not-the-password-at-all"),
		chromedp.SendKeys(byLabel("New password"), "a-brand-new-passphrase"),
	)
	b.press("change the password", button("Change password"))
	page = b.text()
	is.True(strings.Contains(page, "The current password you typed is not your current password."))
	is.True(!strings.Contains(page, "current_password"))
	b.shot("password")
}
