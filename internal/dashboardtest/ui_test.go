package dashboardtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The tests find what a person finds: a field by its label, a button or a
// link by its words, a row by what it says. These return XPath selectors.

// byLabel is the form control whose label reads text.
func byLabel(text string) string {
	return fmt.Sprintf(`//*[@id=//label[normalize-space()=%s]/@for]`, xq(text))
}

// button is the button that reads words.
func button(words string) string {
	return fmt.Sprintf(`//button[normalize-space()=%s]`, xq(words))
}

// link is the link that reads words.
func link(words string) string {
	return fmt.Sprintf(`//a[normalize-space()=%s]`, xq(words))
}

// row is the table row that says text somewhere.
func row(text string) string {
	return fmt.Sprintf(`//tr[contains(normalize-space(), %s)]`, xq(text))
}

// xq quotes s as an XPath string literal.
func xq(s string) string {
	if !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return `'` + s + `'`
}

// browserSession is one headless Chromium tab on a world's server.
type browserSession struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // where screenshots go
	// width and height are the viewport the tab is held at, and returns
	// to after a screenshot: 1280 × 900, or a phone's 390 × 844.
	width, height int64
}

// open starts a headless Chromium for the test, 1280 × 900.
func open(t *testing.T, w *world) *browserSession {
	t.Helper()
	path := browser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The browser is bound to the test, not to one step; its viewport is
	// the one fullShot returns to, so that a screenshot resizes nothing.
	// Every page records what its Content-Security-Policy refused.
	watch := chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.cspRefused = [];
			document.addEventListener("securitypolicyviolation", e => window.cspRefused.push(e.violatedDirective + " " + e.blockedURI));`).Do(ctx)
		return err
	})
	if err := chromedp.Run(bctx, chromedp.EmulateViewport(1280, 900), watch); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &browserSession{t: t, ctx: bctx, base: w.srv.URL, dir: shots(t), width: 1280, height: 900}
}

// hold holds the tab at a viewport width: 1280 (900 high) or a phone's
// 390 (844 high).
func (b *browserSession) hold(width int64) {
	b.t.Helper()
	b.width, b.height = width, 900
	if width < 800 {
		b.height = 844
	}
	b.run("hold the tab at "+fmt.Sprint(width)+" px", chromedp.EmulateViewport(b.width, b.height))
}

// widths runs a browser test at 1280 px and at 390 px, each in a world
// and a tab of its own.
func widths(t *testing.T, test func(t *testing.T, width int64)) {
	for _, width := range []int64{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) { test(t, width) })
	}
}

// cspKept fails the test if the page's Content-Security-Policy refused
// anything: the dashboard's scripts and styles keep to it.
func (b *browserSession) cspKept() {
	b.t.Helper()
	var refused []string
	b.eval("read the policy's refusals", `window.cspRefused || []`, &refused)
	if len(refused) > 0 {
		b.t.Errorf("the Content-Security-Policy refused %v", refused)
	}
}

// run runs a step's actions, failing the test after 20 s.
func (b *browserSession) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// signIn signs in by the form's labels and waits for the overview.
func (b *browserSession) signIn(email, password string) {
	b.t.Helper()
	b.run("sign in as "+email,
		chromedp.Navigate(b.base+"/sign-in"),
		chromedp.WaitVisible(byLabel("E-mail address")),
		chromedp.SendKeys(byLabel("E-mail address"), email),
		chromedp.SendKeys(byLabel("Password"), password),
	)
	b.press("sign in", button("Sign in"))
	b.run("wait for the overview", chromedp.WaitVisible(`//h1[normalize-space()="Overview"]`))
}

// text returns what the page shows in main, as a person reads it.
func (b *browserSession) text() string {
	b.t.Helper()
	var s string
	b.run("read the page", chromedp.Evaluate(`document.querySelector("main").innerText`, &s))
	return s
}

// waitText waits until the page's main part says s.
func waitText(s string) chromedp.Action {
	return chromedp.WaitVisible(fmt.Sprintf(`//main[contains(normalize-space(.), %s)]`, xq(s)))
}

// press clicks what sel finds and waits for the page that leads to (after
// any redirect), failing the test after 20 s.
func (b *browserSession) press(what, sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(sel)); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// url returns the address of the page shown.
func (b *browserSession) url() string {
	b.t.Helper()
	var u string
	b.run("read the address", chromedp.Location(&u))
	return u
}

// eval evaluates js and stores its result in out.
func (b *browserSession) eval(what, js string, out any) {
	b.t.Helper()
	b.run(what, chromedp.Evaluate(js, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
}

// shot saves the page's screenshot at 1280 px wide as name.png and at 390
// px as name-390.png (into docs/screenshots with FLEET_SCREENSHOTS set).
func (b *browserSession) shot(name string) {
	b.t.Helper()
	b.run("screenshot "+name, fullShot(b.dir, name+".png", 1280, 900), fullShot(b.dir, name+"-390.png", 390, 844),
		chromedp.EmulateViewport(b.width, b.height), settle())
}

// settle waits for two frames: the layout of a new viewport drawn.
func settle() chromedp.Action {
	return chromedp.Evaluate(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })
}

func fullShot(dir, name string, width, height int64) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var buf []byte
		if err := chromedp.EmulateViewport(width, height).Do(ctx); err != nil {
			return err
		}
		if err := settle().Do(ctx); err != nil {
			return err
		}
		if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
			return err
		}
		if err := chromedp.EmulateViewport(1280, 900).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), buf, 0o644)
	})
}

// fillKey opens the keys page and fills in the new key's form: its name,
// and then what more sets.
func (b *browserSession) fillKey(name string, more ...chromedp.Action) {
	b.t.Helper()
	b.run("fill in a key", append([]chromedp.Action{
		chromedp.Navigate(b.base + "/settings/api-keys"),
		chromedp.WaitVisible(byLabel("Name")),
		chromedp.SendKeys(byLabel("Name"), name),
	}, more...)...)
}

// generateKey generates a key with the form and returns its secret, read
// from the page the form leads to.
func (b *browserSession) generateKey(name string, more ...chromedp.Action) string {
	b.t.Helper()
	b.fillKey(name, more...)
	b.press("generate the key", button("Generate key"))
	var secret string
	b.run("read the key", chromedp.Value(byLabel("The new API key"), &secret))
	return secret
}

// signOut presses Sign out, opening the menu first where a phone's header
// folds it away.
func (b *browserSession) signOut() {
	b.t.Helper()
	var folded bool
	b.eval("look for the menu", `(() => { const m = document.querySelector(".menu-button"); return m !== null && m.offsetParent !== null; })()`, &folded)
	if folded {
		b.run("open the menu", chromedp.Click(button("Menu")), chromedp.WaitVisible(button("Sign out")))
	}
	b.press("sign out", button("Sign out"))
}
