package fleet_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// The example of the Standard Webhooks specification.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specBody      = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignWebhookMatchesTheSpecificationExample(t *testing.T) {
	is := is.New(t)
	sig, err := fleet.SignWebhook([]string{specSecret}, specID, specTimestamp, []byte(specBody))
	is.NoErr(err)
	is.Equal(sig, specSignature)
	at := time.Unix(specTimestamp, 0)
	is.NoErr(fleet.VerifyWebhook(specSecret, specID, "1614265330", specSignature, []byte(specBody), at))
	// Recomputed independently from the specification's definition.
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(specSecret, "whsec_"))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(specID + ".1614265330." + specBody))
	is.Equal("v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)), specSignature)
}

func TestVerifyWebhook(t *testing.T) {
	is := is.New(t)
	now := time.Unix(specTimestamp, 0)
	body := []byte(specBody)
	other := fleet.NewWebhookSecret()
	both, err := fleet.SignWebhook([]string{other, specSecret}, specID, specTimestamp, body)
	is.NoErr(err)
	is.Equal(len(strings.Fields(both)), 2) // space-separated, one per secret
	is.NoErr(fleet.VerifyWebhook(specSecret, specID, "1614265330", both, body, now))
	is.NoErr(fleet.VerifyWebhook(other, specID, "1614265330", both, body, now))
	for name, c := range map[string]struct {
		secret, id, ts, sig, body string
		now                       time.Time
		want                      error
	}{
		"body changed":    {specSecret, specID, "1614265330", specSignature, specBody + " ", now, fleet.ErrWebhookSignature},
		"id changed":      {specSecret, "msg_other", "1614265330", specSignature, specBody, now, fleet.ErrWebhookSignature},
		"other secret":    {other, specID, "1614265330", specSignature, specBody, now, fleet.ErrWebhookSignature},
		"no v1":           {specSecret, specID, "1614265330", "v2," + specSignature[3:], specBody, now, fleet.ErrWebhookSignature},
		"empty":           {specSecret, specID, "1614265330", "", specBody, now, fleet.ErrWebhookSignature},
		"stale":           {specSecret, specID, "1614265330", specSignature, specBody, now.Add(5*time.Minute + time.Second), fleet.ErrWebhookTimestamp},
		"future":          {specSecret, specID, "1614265330", specSignature, specBody, now.Add(-5*time.Minute - time.Second), fleet.ErrWebhookTimestamp},
		"bad timestamp":   {specSecret, specID, "x", specSignature, specBody, now, fleet.ErrWebhookTimestamp},
		"just in time":    {specSecret, specID, "1614265330", specSignature, specBody, now.Add(5 * time.Minute), nil},
		"just too early":  {specSecret, specID, "1614265330", specSignature, specBody, now.Add(-5 * time.Minute), nil},
		"among junk sigs": {specSecret, specID, "1614265330", "v1,AAAA v1,!!! " + specSignature, specBody, now, nil},
	} {
		t.Run(name, func(t *testing.T) {
			is.New(t).Equal(fleet.VerifyWebhook(c.secret, c.id, c.ts, c.sig, []byte(c.body), c.now), c.want)
		})
	}
}

func TestNewWebhookSecret(t *testing.T) {
	is := is.New(t)
	s := fleet.NewWebhookSecret()
	is.True(strings.HasPrefix(s, "whsec_"))
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	is.NoErr(err)
	is.Equal(len(key), 32)
	is.True(s != fleet.NewWebhookSecret())
}

func TestRetrySchedule(t *testing.T) {
	is := is.New(t)
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
	for i, w := range want {
		d, ok := fleet.RetryDelay(i+1, 0)
		is.True(ok)
		is.Equal(d, w) // after attempt i+1
		d, _ = fleet.RetryDelay(i+1, 0.999)
		is.True(d > w && d < w+w/10+time.Millisecond) // jitter stretches by up to 10%
	}
	_, ok := fleet.RetryDelay(10, 0)
	is.True(!ok) // ten attempts, then failed
	is.Equal(fleet.MaxAttempts, 10)
}

// addressForms lists every way of writing a refused address that the
// registration check must catch without resolving anything.
var addressForms = []string{
	"https://127.0.0.1/", "https://127.0.0.2:8443/x", "https://[::1]/", "https://0.0.0.0/", "https://[::]/",
	"https://10.0.0.1/", "https://172.16.5.4/", "https://192.168.1.1/", "https://169.254.169.254/latest/meta-data/",
	"https://169.254.0.1/", "https://[fe80::1]/", "https://[fe80::1%25eth0]/", "https://[fc00::1]/", "https://[fd12:3456::1]/",
	"https://224.0.0.1/", "https://239.255.255.250/", "https://[ff02::1]/", "https://100.64.0.1/", "https://100.127.255.254/",
	"https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/", "https://[::ffff:10.0.0.1]/", "https://[::ffff:169.254.169.254]/",
	"https://[::127.0.0.1]/", "https://[64:ff9b::7f00:1]/", "https://[2002:7f00:1::]/",
	"https://[::ffff:0:7f00:1]/", "https://[::ffff:0:169.254.169.254]/", "https://[0:0:0:0:ffff:0:a00:1]/", // IPv4-translated
	"https://[2001::1]/", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", // Teredo
	"https://2130706433/", "https://0x7f000001/", "https://0x7f.1/", "https://0177.0.0.1/", "https://017700000001/",
	"https://127.1/", "https://127.0.1/", "https://0/", "https://10.1/", "https://0xa9fea9fe/", "https://255.255.255.255/",
	"https://198.18.0.1/", "https://240.0.0.1/", "https://127.0.0.1./",
	"http://example.com/", "ftp://example.com/", "https://user:pass@example.com/", "https:///nohost", "/relative",
	"https://example.com:0/", "https://example.com:99999/", "javascript:alert(1)", "https://example.com/#frag",
}

func TestCheckWebhookURLRefusesEveryAddressForm(t *testing.T) {
	for _, u := range addressForms {
		if _, err := fleet.CheckWebhookURL(u, false); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
	for _, u := range []string{"https://hooks.example.com/fleet", "https://93.184.216.34/x", "https://[2606:4700::1111]/",
		"https://example.com:8443/a?b=c", "https://a-1.example.co.uk/"} {
		if _, err := fleet.CheckWebhookURL(u, false); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	// Insecure mode allows http and local addresses, for development.
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://localhost/", "https://10.0.0.1/"} {
		if _, err := fleet.CheckWebhookURL(u, true); err != nil {
			t.Errorf("insecure: %s refused: %v", u, err)
		}
	}
}

func TestForbiddenAddr(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "::1", "10.1.2.3", "172.31.255.255", "192.168.0.1", "169.254.169.254",
		"fe80::1", "fc00::1", "fd00::1", "224.0.0.251", "ff02::1", "0.0.0.0", "::", "100.64.0.1", "::ffff:127.0.0.1",
		"::ffff:192.168.1.1", "64:ff9b::a00:1", "255.255.255.255",
		"::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "::ffff:0:808:808", // IPv4-translated (SIIT), whatever the IPv4 address
		"2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff"} { // Teredo
		if !fleet.ForbiddenAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s allowed", a)
		}
	}
	for _, a := range []string{"93.184.216.34", "8.8.8.8", "2606:4700::1111", "100.128.0.1", "172.32.0.1",
		"2001:4860:4860::8888", "2001:1::1", "::fffe:0:808:808"} {
		if fleet.ForbiddenAddr(netip.MustParseAddr(a)) {
			t.Errorf("%s refused", a)
		}
	}
	if !fleet.ForbiddenAddr(netip.Addr{}) {
		t.Error("the invalid address is allowed")
	}
}

// FuzzWebhookURL: any string is judged without panicking, and an accepted
// URL is https with a host that is no forbidden address literal. Run longer
// with go test -run XXX -fuzz FuzzWebhookURL ./fleet/
func FuzzWebhookURL(f *testing.F) {
	for _, u := range addressForms {
		f.Add(u)
	}
	f.Add("https://hooks.example.com/fleet")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := fleet.CheckWebhookURL(raw, false)
		if err != nil {
			return
		}
		if u.Scheme != "https" || u.Hostname() == "" || u.User != nil {
			t.Fatalf("accepted %q", raw)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && fleet.ForbiddenAddr(a) {
			t.Fatalf("accepted forbidden address %q", raw)
		}
	})
}
