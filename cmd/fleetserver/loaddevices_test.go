package main

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestLoadDevices runs `fleetserver load --protocol` briefly against a
// real server with device listeners: the devices are registered through
// the API, report over their protocol, and every report is acknowledged.
func TestLoadDevices(t *testing.T) {
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo", "--devices", "teltonika=127.0.0.1:0,osmand=127.0.0.1:0,gps103=127.0.0.1:0")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	addrs := map[string]string{
		"teltonika": s.stdout.waitFor(t, regexp.MustCompile(`^devices: teltonika on tcp (\S+)$`)),
		"osmand":    strings.TrimPrefix(s.stdout.waitFor(t, regexp.MustCompile(`^devices: osmand on (http://\S+)$`)), "http://"),
		"gps103":    s.stdout.waitFor(t, regexp.MustCompile(`^devices: gps103 on tcp (\S+)$`)),
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, proto := range []string{"teltonika", "osmand", "gps103"} {
		t.Run(proto, func(t *testing.T) {
			is := is.New(t)
			args := []string{"load", "--url", s.base, "--key", key, "--protocol", proto, "--device-addr", addrs[proto],
				"--devices", "5", "--interval", "100ms", "--duration", "700ms", "--streams", "0", "--readers", "0", "--progress", "0"}
			var out, errb syncBuf
			is.NoErr(run(context.Background(), args, func(string) string { return "" }, &out, &errb))
			t.Log(out.String())
			is.True(strings.Contains(errb.String(), "registering 5 "+proto+" devices"))
			is.True(strings.Contains(out.String(), "5 devices ("+proto+" at "+addrs[proto]+")"))
			m := regexp.MustCompile(`(?m)^reports\s+(\d+) ok .* by status (\S+)$`).FindStringSubmatch(out.String())
			is.True(m != nil)
			n, _ := strconv.Atoi(m[1])
			is.True(n >= 5) // every device was acknowledged
			ok := "acked"
			if proto == "osmand" {
				ok = "200"
			}
			is.Equal(m[2], ok+":"+m[1]) // and nothing else happened

			// The devices are the account's, each on its load-N vehicle,
			// their last report stored.
			status, body, err := call(client, "GET", s.base+"/v1/devices?limit=100", key, nil)
			is.NoErr(err)
			is.Equal(status, 200)
			seen := 0
			for _, d := range body["data"].([]any) {
				d := d.(map[string]any)
				if d["protocol"] != proto {
					continue
				}
				seen++
				is.True(strings.HasPrefix(d["name"].(string), "load-"))
				lr := d["last_report"].(map[string]any)
				// GPS103's times are whole seconds: reports 100ms apart
				// are mostly duplicates, acknowledged and not stored again.
				if lr["stored"] != true && !(proto == "gps103" && lr["reason"] == "duplicate") {
					t.Errorf("device %v: last report not stored: %v", d["identifier"], lr)
				}
			}
			is.Equal(seen, 5)

			// A second run reuses them.
			errb = syncBuf{}
			is.NoErr(run(context.Background(), append(args, "--duration", "200ms"), func(string) string { return "" }, &out, &errb))
			is.True(!strings.Contains(errb.String(), "registering"))
		})
	}

	// GT06 trackers pointed at the Teltonika port are closed at their
	// login: counted as refused, never as acknowledged.
	is := is.New(t)
	var out, errb syncBuf
	is.NoErr(run(context.Background(), []string{"load", "--url", s.base, "--key", key, "--protocol", "gt06", "--device-addr", addrs["teltonika"],
		"--devices", "2", "--interval", "100ms", "--duration", "500ms", "--streams", "0", "--readers", "0", "--progress", "0"},
		func(string) string { return "" }, &out, &errb))
	t.Log(out.String())
	m := regexp.MustCompile(`(?m)^reports\s+0 ok .* by status (.*)$`).FindStringSubmatch(out.String())
	is.True(m != nil)                                              // none acknowledged
	is.True(regexp.MustCompile(`\brefused:\d+`).MatchString(m[1])) // their logins refused
	is.True(!strings.Contains(m[1], "acked"))
}
