package dashboardtest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// The people of an account, managed by their admin: a role changed by
// the person's Role field, a new sign-in link for someone who forgot their
// password (which the sign-in page tells them to ask for), a person
// removed after a confirmation; the only admin is kept, and says why. A
// viewer is offered none of it, and a forged form is refused.
func TestPeopleInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		ctx := context.Background()
		_, _, err := w.svc.Operator().CreateUser(ctx, w.account.ID, fleet.UserParams{Email: "ben@acme.test", Name: "Ben", Role: fleet.RoleViewer}, "")
		is.NoErr(err)
		b := open(t, w)
		b.hold(width)

		// The sign-in page says what to do when you forgot your password.
		b.run("open the sign-in page", chromedp.Navigate(b.base+"/sign-in"), chromedp.WaitVisible(byLabel("Password")))
		is.True(strings.Contains(b.text(), "Forgot your password? Ask an admin of your account for a new sign-in link"))
		b.signIn(adminEmail, adminPassword)

		b.run("open the people", chromedp.Navigate(b.base+"/users"), chromedp.WaitVisible(byLabel("Role of "+viewerEmail)))
		if width < 800 {
			b.fitsPhone("users", "Change role", "New sign-in link", "Remove…")
		}
		// The only admin stays one.
		b.run("make myself a viewer", chromedp.SetValue(byLabel("Role of "+adminEmail), "viewer"))
		b.press("change my role", row(adminEmail)+button("Change role"))
		is.True(strings.Contains(b.text(), adminEmail+" is the account's only admin and cannot be made a viewer: make another person admin first."))
		// Vic becomes an admin.
		b.run("make Vic an admin", chromedp.SetValue(byLabel("Role of "+viewerEmail), "admin"))
		b.press("change her role", row(viewerEmail)+button("Change role"))
		is.True(strings.Contains(b.text(), viewerEmail+" is now an admin."))
		u, err := w.svc.Operator().UserByEmail(ctx, viewerEmail)
		is.NoErr(err)
		is.Equal(u.Role, fleet.RoleAdmin)
		b.run("back to viewer", chromedp.SetValue(byLabel("Role of "+viewerEmail), "viewer"))
		b.press("change her role back", row(viewerEmail)+button("Change role"))

		// Vic forgot her password: a new link, shown once, signs her in.
		var signInLink string
		b.press("make her a new link", row(viewerEmail)+button("New sign-in link"))
		b.run("read the link", chromedp.Value(byLabel("One-time sign-in link"), &signInLink))
		is.True(strings.Contains(b.text(), "New sign-in link for "+viewerEmail))
		is.True(strings.Contains(signInLink, "/welcome?token="))
		b.run("reload", chromedp.Reload(), chromedp.WaitVisible(byLabel("E-mail address")))
		is.True(!strings.Contains(b.text(), signInLink))
		token := signInLink[strings.Index(signInLink, "token=")+len("token="):]
		_, err = w.svc.SignInLinkUser(ctx, token)
		is.NoErr(err) // it works, until it is used

		// Ben goes, after a confirmation.
		b.press("remove Ben", row("ben@acme.test")+link("Remove…"))
		is.True(strings.Contains(b.text(), "Remove ben@acme.test (Ben), viewer, from Acme Haulage?"))
		if width < 800 {
			b.fitsPhone("remove a person", "Remove ben@acme.test", "Cancel")
		}
		b.shot("user-remove")
		b.press("confirm", button("Remove ben@acme.test"))
		page := b.text()
		is.True(strings.Contains(page, "ben@acme.test is removed: their sessions have ended and their sign-in links no longer work."))
		is.True(!strings.Contains(page, "Ben"))
		_, err = w.svc.Operator().UserByEmail(ctx, "ben@acme.test")
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		b.cspKept()

		// Vic sets a new password with her link: the page it leads to.
		b.signOut()
		b.run("open her link", chromedp.Navigate(signInLink), chromedp.WaitVisible(byLabel("New password")))
		b.shot("welcome")
		b.run("choose a password", chromedp.SendKeys(byLabel("New password"), "vics-brand-new-passphrase"))
		b.press("set it", button("Set password and sign in"))
		b.run("see the overview", chromedp.WaitVisible(`//h1[normalize-space()="Overview"]`))

		// Vic, a viewer: no forms, and a forged one refused.
		b.run("open the people as a viewer", chromedp.Navigate(b.base+"/users"), chromedp.WaitVisible(row(adminEmail)))
		page = b.text()
		for _, never := range []string{"Change role", "New sign-in link", "Remove…", "Add a person"} {
			if strings.Contains(page, never) {
				t.Errorf("a viewer is offered %q", never)
			}
		}
		admin, err := w.svc.Operator().UserByEmail(ctx, adminEmail)
		is.NoErr(err)
		var forged int
		b.eval("forge a removal", `fetch("/users/`+admin.ID+`/remove", {method: "POST"}).then(r => r.status)`, &forged)
		is.Equal(forged, 403)
		_, err = w.svc.Operator().UserByEmail(ctx, adminEmail)
		is.NoErr(err)
	})
}

// A sign-up, where the server allows it, opens a free account whose first
// admin lands on the keys page to make its first key.
func TestSignUpInBrowser(t *testing.T) {
	is := is.New(t)
	w := serveWith(t, setup{signup: true})
	b := open(t, w)
	b.run("open the sign-up page", chromedp.Navigate(b.base+"/sign-up"), chromedp.WaitVisible(byLabel("Company name")),
		chromedp.SendKeys(byLabel("Company name"), "Northwind Freight"),
		chromedp.SendKeys(byLabel("Your name"), "Nora"),
		chromedp.SendKeys(byLabel("E-mail address"), "nora@northwind.test"),
		chromedp.SendKeys(byLabel("Password"), "northwind-first-passphrase"))
	b.shot("sign-up")
	b.press("open the account", button("Open the account"))
	is.True(strings.Contains(b.text(), "Your account is open. Generate its first API key below."))
	u, err := w.svc.Operator().UserByEmail(context.Background(), "nora@northwind.test")
	is.NoErr(err)
	is.Equal(u.Role, fleet.RoleAdmin)
	is.True(u.AccountID != w.account.ID)
}
