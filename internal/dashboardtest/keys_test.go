package dashboardtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// keyRow is the row of the key whose prefix a cell shows.
func keyRow(prefix string) string {
	return fmt.Sprintf(`//tr[td[normalize-space()=%s]]`, xq(prefix+"…"))
}

// A rotation shows its two keys as a pair: the new one "replaces" the old,
// the old one is "replaced by" the new and says until when it works. The
// old one offers no Rotate; "Revoke both" stops both at once; banners name
// keys by their name, never by their id.
func TestRotationShownAsAPair(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)

	var rotated string
	old := b.generateKey("Billing backend")
	oldPrefix := old[:fleet.KeyPrefixLen]
	b.run("choose a day's grace", chromedp.SetValue(keyRow(oldPrefix)+`//select`, "86400"))
	b.press("rotate it", keyRow(oldPrefix)+button("Rotate"))
	b.run("read the new key", chromedp.Value(byLabel("The new API key"), &rotated))
	newPrefix := rotated[:fleet.KeyPrefixLen]
	is.True(fleet.CheckSecret(rotated) && rotated != old)
	page := b.text()
	is.True(strings.Contains(page, "Billing backend"))
	is.True(strings.Contains(page, "works until")) // the notice says how long the old key lasts

	var newRow, oldRow string
	b.run("read the pair",
		chromedp.Text(keyRow(newPrefix), &newRow),
		chromedp.Text(keyRow(oldPrefix), &oldRow),
	)
	is.True(strings.Contains(newRow, "Replaces "+oldPrefix))
	is.True(strings.Contains(oldRow, "Replaced by "+newPrefix))
	is.True(strings.Contains(oldRow, "works until"))
	var oldRotates, newRotates bool
	b.eval("look for Rotate on each key", `document.evaluate('`+keyRow(oldPrefix)+button("Rotate")+`', document, null, 9, null).singleNodeValue !== null`, &oldRotates)
	b.eval("look for Rotate on the new key", `document.evaluate('`+keyRow(newPrefix)+button("Rotate")+`', document, null, 9, null).singleNodeValue !== null`, &newRotates)
	is.True(!oldRotates) // a key being replaced is not rotated again
	is.True(newRotates)
	b.cspKept()
	b.shot("api-keys")

	// Revoke the new key: the page says the old one still works, and
	// offers to revoke both.
	b.press("revoke the new key", keyRow(newPrefix)+link("Revoke…"))
	page = b.text()
	is.True(strings.Contains(page, oldPrefix))
	is.True(strings.Contains(page, "works until"))
	b.shot("api-key-revoke")
	var notice string
	b.press("revoke both", button("Revoke both"))
	b.run("read the notice", chromedp.Text(`//p[@role="status"]`, &notice))
	is.True(strings.Contains(notice, "Billing backend"))
	is.True(!strings.Contains(notice, "key_")) // by name, not by id
	for _, secret := range []string{old, rotated} {
		status, _ := w.api(t, "GET", "/v1/account", secret, "")
		is.Equal(status, 401) // both stopped at once
	}
}
