package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestDemoOnLoopbackIsALocalDemo: `fleetserver --demo` on a loopback --addr
// (the default) turns on what local use needs — webhooks to a receiver on
// this machine, and the dashboard's session cookie over plain http — and
// says so; a flag or variable given explicitly wins; on any other address
// --demo turns on neither, and the explicit flags still work there.
func TestDemoOnLoopbackIsALocalDemo(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      map[string]string
		args     []string
		webhooks bool // http://127.0.0.1 webhooks are taken and delivered
		cookies  bool // the session cookie is fleet_session, without Secure
		banner   string
	}{
		{name: "loopback", args: []string{"--demo"}, webhooks: true, cookies: true,
			banner: "Local demo: webhooks may go to http://127.0.0.1 and other private addresses, and the dashboard signs in over plain http; never expose this address."},
		{name: "localhost", args: []string{"--demo", "--addr", "localhost:0"}, webhooks: true, cookies: true,
			banner: "Local demo: webhooks may go to http://127.0.0.1 and other private addresses, and the dashboard signs in over plain http; never expose this address."},
		{name: "loopback, both flags given off", args: []string{"--demo", "--insecure-webhooks=false", "--dashboard-insecure-cookies=false"}},
		{name: "loopback, a variable given off", env: map[string]string{"FLEET_INSECURE_WEBHOOKS": "false"}, args: []string{"--demo"}, cookies: true,
			banner: "Local demo: the dashboard signs in over plain http; never expose this address."},
		{name: "loopback, demo from its variable", env: map[string]string{"FLEET_DEMO": "true"}, webhooks: true, cookies: true,
			banner: "Local demo: webhooks may go to http://127.0.0.1 and other private addresses, and the dashboard signs in over plain http; never expose this address."},
		{name: "all interfaces", args: []string{"--demo", "--addr", "0.0.0.0:0"}},
		{name: "all interfaces, webhooks given", args: []string{"--demo", "--addr", "0.0.0.0:0", "--insecure-webhooks"}, webhooks: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			env := map[string]string{"FLEET_DB": "memory:", "FLEET_MAP_TILES": "off"}
			for k, v := range c.env {
				env[k] = v
			}
			s := start(t, env, c.args...)
			key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
			email := s.stdout.waitFor(t, regexp.MustCompile(`sign in as (\S+) with the password`))
			password := s.stdout.waitFor(t, regexp.MustCompile(`with the password (\S+)`))
			// The start ends with the dashboard's line, printed just after
			// the one start waits for: read the output once it is there.
			s.stdout.waitFor(t, regexp.MustCompile(`^(dashboard at) `))
			out := s.stdout.String()
			if c.banner != "" {
				is.True(strings.HasPrefix(out, c.banner+"\n")) // said first, before the key
				is.True(strings.Contains(out, "(plain http on loopback: development only)") == c.cookies)
			} else {
				is.True(!strings.Contains(out, "Local demo")) // nothing turned on, nothing said
			}

			// Webhooks to a receiver on this machine.
			got := make(chan []byte, 1)
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				select {
				case got <- b:
				default:
				}
			}))
			defer rcv.Close()
			status, wh := apiCall(t, "POST", s.base+"/v1/webhooks", key, map[string]any{"url": rcv.URL + "/hook", "events": []string{"webhook.test"}})
			if !c.webhooks {
				is.Equal(status, 422) // refused: not https on a public host
			} else {
				is.Equal(status, 201)
				id := wh["webhook_id"].(string)
				status, _ = apiCall(t, "POST", s.base+"/v1/webhooks/"+id+"/test", key, nil)
				is.Equal(status, 202)
				select {
				case b := <-got:
					is.True(strings.Contains(string(b), `"type":"webhook.test"`)) // the sender delivers there too
				case <-time.After(20 * time.Second):
					t.Fatal("no delivery")
				}
			}

			// The dashboard's session cookie.
			nc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := nc.PostForm(s.base+"/sign-in", url.Values{"email": {email}, "password": {password}})
			is.NoErr(err)
			res.Body.Close()
			is.Equal(res.StatusCode, http.StatusSeeOther)
			cookies := res.Cookies()
			is.Equal(len(cookies), 1)
			if c.cookies {
				is.Equal(cookies[0].Name, "fleet_session") // a browser keeps it over plain http
				is.True(!cookies[0].Secure)
			} else {
				is.Equal(cookies[0].Name, "__Host-fleet_session")
				is.True(cookies[0].Secure)
			}
		})
	}
}

// TestDemoDoesNotLiftTheCookieRuleElsewhere: --dashboard-insecure-cookies
// given on a non-loopback address is refused with --demo as without it.
func TestDemoDoesNotLiftTheCookieRuleElsewhere(t *testing.T) {
	is := is.New(t)
	_, err := cmdRun(map[string]string{"FLEET_DB": "memory:"}, "serve", "--demo", "--addr", "0.0.0.0:0", "--dashboard-insecure-cookies")
	is.True(err != nil && strings.Contains(err.Error(), "loopback"))
}
