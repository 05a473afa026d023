package fleethttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// chromium returns the path of a Chromium to drive, or skips the test:
// FLEET_CHROMIUM names one, else chromium or chromium-browser on the PATH
// (Debian's package is /usr/bin/chromium).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FLEET_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium to drive: install Debian's chromium package (or set FLEET_CHROMIUM) to run the browser tests")
	return ""
}

// browserPage is a page served from its own origin that calls the API the
// way a browser app does: fetch with Authorization (a preflight first),
// reading an exposed rate-limit header, then an EventSource opened with a
// stream token. What happens is left in window.fleet for the test to read.
const browserPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fleet map</title></head>
<body><ul id="log"></ul>
<script>
window.fleet = {received: [], open: false, remaining: null, error: null};
const p = new URLSearchParams(location.hash.slice(1));
const api = p.get("api") + "/v1";
(async () => {
  try {
    const res = await fetch(api + "/stream_tokens", {method: "POST", headers: {Authorization: "Bearer " + p.get("key")}});
    fleet.remaining = res.headers.get("X-RateLimit-Remaining");
    const {data} = await res.json();
    const stream = new EventSource(api + "/vehicles/locations/stream?token=" + encodeURIComponent(data.token));
    stream.onopen = () => { fleet.open = true; };
    stream.addEventListener("location", (ev) => {
      fleet.received.push(JSON.parse(ev.data).vehicle_id);
      document.getElementById("log").insertAdjacentHTML("beforeend", "<li>" + ev.lastEventId + "</li>");
    });
    stream.onerror = () => { fleet.streamError = stream.readyState; };
  } catch (e) {
    fleet.error = String(e);
  }
})();
</script></body></html>`

// In headless Chromium, a page from a listed origin makes a stream token
// (its preflight approved, X-RateLimit-Remaining readable) and follows the
// live stream with EventSource; a page from another origin is refused by
// the browser itself.
func TestBrowserEventSourceWithStreamToken(t *testing.T) {
	exe := chromium(t)
	is := is.New(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(browserPage))
	}))
	defer page.Close()
	other := httptest.NewServer(page.Config.Handler)
	defer other.Close()
	e := newEnvOn(t, memstore.New(), testclock.New(T0), fleethttp.WithCORSOrigins([]string{page.URL}))
	_, owner := e.account(fleet.PlanPro)
	reader := e.keyWith(owner, "locations:read")
	v := e.vehicle(owner, "Truck 7")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	bctx, cancel = context.WithTimeout(bctx, 60*time.Second)
	defer cancel()

	var state struct {
		Received  []string `json:"received"`
		Open      bool     `json:"open"`
		Remaining *string  `json:"remaining"`
		Error     *string  `json:"error"`
	}
	read := chromedp.Evaluate(`window.fleet`, &state)
	is.NoErr(chromedp.Run(bctx,
		chromedp.Navigate(page.URL+"/#api="+e.srv.URL+"&key="+reader),
		chromedp.Poll(`window.fleet && (window.fleet.open || window.fleet.error !== null)`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		read))
	is.Equal(state.Error, nil)                                // the preflight and the token request went through
	is.True(state.Open)                                       // the EventSource opened with the token, no Authorization
	is.True(state.Remaining != nil && *state.Remaining != "") // an exposed header the script can read

	e.do("POST", "/v1/vehicles/"+v+"/locations", owner, batch(pt(e.clock.Now(), 1, 1, 30)))
	is.NoErr(chromedp.Run(bctx,
		chromedp.Poll(`window.fleet.received.length > 0`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		read))
	is.Equal(state.Received, []string{v}) // the report reached the page

	// The same page from an origin the server does not list: the browser
	// refuses to let the script see the answer.
	state.Error, state.Open = nil, false
	is.NoErr(chromedp.Run(bctx,
		chromedp.Navigate(other.URL+"/#api="+e.srv.URL+"&key="+reader),
		chromedp.Poll(`window.fleet && (window.fleet.open || window.fleet.error !== null)`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		read))
	is.True(state.Error != nil) // fetch failed: no CORS approval
	is.True(!state.Open)
}
