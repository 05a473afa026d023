package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestUsersCreate(t *testing.T) {
	is := is.New(t)
	env := map[string]string{"FLEET_DB": "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")}
	acc := accountForUsers(t, env)
	out, err := cmdRun(env, "users", "create", "--account", acc["account_id"], "--email", "Ada@Acme.test", "--role", "admin", "--password-stdin")
	is.NoErr(err)
	is.True(strings.Contains(out, "ada@acme.test, admin"))
	is.True(!strings.Contains(out, "a-long-admin-passphrase"))
	is.True(!strings.Contains(out, "sign-in link"))

	out, err = cmdRun(env, "users", "create", "--account", acc["account_id"], "--email", "viv@acme.test", "--url", "https://fleet.example.com/")
	is.NoErr(err)
	is.True(regexp.MustCompile(`https://fleet\.example\.com/welcome\?token=[A-Za-z0-9_-]{43}`).MatchString(out)) // a one-time link
	is.True(strings.Contains(out, "viewer"))                                                                     // the default role

	_, err = cmdRun(env, "users", "create", "--account", acc["account_id"], "--email", "viv@acme.test")
	is.True(err != nil && strings.Contains(err.Error(), "exists"))
	_, err = cmdRun(env, "users", "create", "--account", acc["account_id"], "--email", "x@acme.test", "--role", "owner")
	is.True(err != nil && strings.Contains(err.Error(), "--role"))
	stdin = strings.NewReader("password1234\n")
	_, err = cmdRun(env, "users", "create", "--account", acc["account_id"], "--email", "y@acme.test", "--password-stdin")
	is.True(err != nil && strings.Contains(err.Error(), "too common"))
	_, err = cmdRun(env, "users", "create", "--account", "acc_missing", "--email", "z@acme.test")
	is.True(err != nil)
}

// accountForUsers makes an account with the command line and readies
// standard input to give the password "a-long-admin-passphrase" once.
func accountForUsers(t *testing.T, env map[string]string) map[string]string {
	t.Helper()
	out, err := cmdRun(env, "accounts", "create", "--company", "Acme", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var acc map[string]string
	if err := json.Unmarshal([]byte(out), &acc); err != nil {
		t.Fatal(err)
	}
	old := stdin
	t.Cleanup(func() { stdin = old })
	stdin = strings.NewReader("a-long-admin-passphrase\n")
	return acc
}

func TestServeDashboardBesideAPI(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo", "--dashboard-insecure-cookies", "--map-tiles", "off")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	email := s.stdout.waitFor(t, regexp.MustCompile(`sign in as (\S+) with the password`))
	password := s.stdout.waitFor(t, regexp.MustCompile(`with the password (\S+)`))

	status, _ := get(t, s.base+"/v1/account", key)
	is.Equal(status, 200) // the API is where it was
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.PostForm(s.base+"/sign-in", url.Values{"email": {email}, "password": {password}})
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200) // followed to the overview
	is.Equal(res.Request.URL.Path, "/")
	u, _ := url.Parse(s.base)
	is.Equal(len(jar.Cookies(u)), 1)
	is.Equal(jar.Cookies(u)[0].Name, "fleet_session")
	res, err = c.Get(s.base + "/settings/api-keys")
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	is.True(!strings.Contains(s.stderr.String(), password)) // never logged
}

func TestInsecureCookiesOnlyOnLoopback(t *testing.T) {
	is := is.New(t)
	_, err := cmdRun(map[string]string{"FLEET_DB": "memory:"}, "serve", "--addr", "0.0.0.0:0", "--dashboard-insecure-cookies")
	is.True(err != nil && strings.Contains(err.Error(), "loopback"))
	_, err = cmdRun(map[string]string{"FLEET_DB": "memory:", "FLEET_DASHBOARD_INSECURE_COOKIES": "true"}, "serve", "--addr", "192.0.2.1:0")
	is.True(err != nil && strings.Contains(err.Error(), "loopback")) // the flag's FLEET_* variable too
}

// TestPublicURL: with --public-url (FLEET_PUBLIC_URL) the sign-in link of a
// person added on the dashboard is on that address, whatever Host the
// request carried; a value that is not an absolute http(s) URL without
// query or fragment stops the server from starting.
func TestPublicURL(t *testing.T) {
	is := is.New(t)
	for _, bad := range []string{"fleet.example.com", "ftp://fleet.example.com", "https://fleet.example.com/?a=1", "https://fleet.example.com/#x"} {
		_, err := cmdRun(map[string]string{"FLEET_DB": "memory:"}, "serve", "--addr", "127.0.0.1:0", "--public-url", bad)
		is.True(err != nil && strings.Contains(err.Error(), "--public-url")) // bad
		_, err = cmdRun(map[string]string{"FLEET_DB": "memory:", "FLEET_PUBLIC_URL": bad}, "serve", "--addr", "127.0.0.1:0")
		is.True(err != nil && strings.Contains(err.Error(), "public-url")) // bad, from the environment
	}

	s := start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_PUBLIC_URL": "https://fleet.example.com"}, "--demo", "--dashboard-insecure-cookies")
	email := s.stdout.waitFor(t, regexp.MustCompile(`sign in as (\S+) with the password`))
	password := s.stdout.waitFor(t, regexp.MustCompile(`with the password (\S+)`))
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(s.base+"/sign-in", url.Values{"email": {email}, "password": {password}})
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusSeeOther)
	cookies := res.Cookies()
	is.Equal(len(cookies), 1)

	req, err := http.NewRequest("POST", s.base+"/users", strings.NewReader(url.Values{"email": {"new@demo.test"}, "role": {"viewer"}}.Encode()))
	is.NoErr(err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(cookies[0])
	req.Host = "other.example" // forged
	req.Header.Set("X-Forwarded-Proto", "http")
	res, err = http.DefaultTransport.RoundTrip(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusSeeOther) // to the page that shows the link once
	req, err = http.NewRequest("GET", s.base+res.Header.Get("Location"), nil)
	is.NoErr(err)
	req.AddCookie(cookies[0])
	req.Host = "other.example"
	req.Header.Set("X-Forwarded-Proto", "http")
	res, err = http.DefaultTransport.RoundTrip(req)
	is.NoErr(err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	is.True(regexp.MustCompile(`https://fleet\.example\.com/welcome\?token=[A-Za-z0-9_-]{43}`).Match(b)) // the public address
	is.True(!strings.Contains(string(b), "other.example"))
}

// The dashboard's device pages show the ports the device listeners are
// bound to (port 0 included) on --public-url's host, and --demo on a
// loopback address opens the unknown devices to its admin.
func TestDashboardShowsTheDevicePorts(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo", "--map-tiles", "off", "--devices", "Teltonika=127.0.0.1:0",
		"--public-url", "https://fleet.example.com")
	port := s.stdout.waitFor(t, regexp.MustCompile(`devices: teltonika on tcp 127\.0\.0\.1:(\d+)`))
	email := s.stdout.waitFor(t, regexp.MustCompile(`sign in as (\S+) with the password`))
	password := s.stdout.waitFor(t, regexp.MustCompile(`with the password (\S+)`))
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.PostForm(s.base+"/sign-in", url.Values{"email": {email}, "password": {password}})
	is.NoErr(err)
	res.Body.Close()
	for _, path := range []string{"/devices/new", "/devices/unknown"} {
		res, err = c.Get(s.base + path)
		is.NoErr(err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		is.Equal(res.StatusCode, http.StatusOK) // path
		if path == "/devices/new" {
			is.True(strings.Contains(string(b), "<code>"+port+"</code>"))
			is.True(strings.Contains(string(b), "<code>fleet.example.com</code>"))
		}
	}
}
