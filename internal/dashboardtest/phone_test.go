package dashboardtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// onScreen is a script that says whether every button or link reading
// words can be seen and pressed where it is: inside the viewport's width,
// and not hidden in a box that scrolls sideways.
func onScreen(words string) string {
	return fmt.Sprintf(`(() => {
		const found = [...document.querySelectorAll("main button, main a")].filter(e => e.innerText.trim() === %q);
		return found.length > 0 && found.every(e => {
			let r = e.getBoundingClientRect();
			window.scrollTo(0, window.scrollY + r.top - window.innerHeight / 2); // up or down, never sideways
			r = e.getBoundingClientRect();
			const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
			return r.left >= 0 && r.right <= window.innerWidth && hit !== null && (hit === e || e.contains(hit));
		});
	})()`, words)
}

// fitsPhone checks the page as a phone shows it: the header under a tenth
// of the screen, no sideways scroll, and every button or link reading
// each of words on screen.
func (b *browserSession) fitsPhone(page string, words ...string) {
	b.t.Helper()
	var header float64
	b.eval("measure the header", `document.querySelector("header").getBoundingClientRect().height / window.innerHeight`, &header)
	if header > 0.1 {
		b.t.Errorf("%s: the header takes %.0f%% of the screen", page, header*100)
	}
	var wide bool
	b.eval("look for a sideways scroll", `document.documentElement.scrollWidth > window.innerWidth`, &wide)
	if wide {
		b.t.Errorf("%s: the page scrolls sideways", page)
	}
	for _, word := range words {
		var ok bool
		b.eval("look for "+word, onScreen(word), &ok)
		if !ok {
			b.t.Errorf("%s: %q is not on screen", page, word)
		}
	}
}

// At 390 px a list is a column of cards whose buttons are on screen, the
// page never scrolls sideways, and the header is one line with a menu.
func TestPhoneLayout(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	_, err := w.svc.CreateAlert(context.Background(), fleet.SystemPrincipal(w.account),
		fleet.Alert{Type: fleet.AlertCustom, Severity: fleet.SeverityCritical, Message: "Door open at the depot."})
	is.NoErr(err)
	b := open(t, w)
	b.signIn(adminEmail, adminPassword)
	b.hold(390)
	check := b.fitsPhone
	b.run("open the alerts", chromedp.Navigate(b.base+"/alerts"), chromedp.WaitVisible(row("Door open at the depot.")))
	check("alerts", "Acknowledge", "Resolve")
	b.run("open the keys", chromedp.Navigate(b.base+"/settings/api-keys"), chromedp.WaitVisible(byLabel("Name")))
	check("keys", "Rotate", "Revoke…")
	b.run("open the overview", chromedp.Navigate(b.base+"/"), chromedp.WaitVisible(`//h1[normalize-space()="Overview"]`))
	check("overview")
	b.run("open the map", chromedp.Navigate(b.base+"/map"), chromedp.WaitVisible(row("Truck 7")))
	check("map")

	// The pages are behind the menu, one press away.
	var hidden bool
	b.eval("look for the pages", `document.evaluate('`+link("API keys")+`', document, null, 9, null).singleNodeValue.offsetParent === null`, &hidden)
	is.True(hidden) // folded away
	b.run("open the menu", chromedp.Click(button("Menu")), chromedp.WaitVisible(link("API keys")))
	var expanded string
	b.run("read the menu's state", chromedp.AttributeValue(button("Menu"), "aria-expanded", &expanded, nil))
	is.Equal(expanded, "true")
	b.cspKept()
	b.run("screenshot the menu", fullShot(b.dir, "menu-390.png", 390, 844), chromedp.EmulateViewport(390, 844))
	b.run("go to the keys", chromedp.Click(link("API keys")), chromedp.WaitVisible(byLabel("Name")))
}
