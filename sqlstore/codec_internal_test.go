package sqlstore

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// randomMemory is a telemetry memory with each field set or not, texts
// that encoding/json writes as they are and some it escapes.
func randomMemory(rng *rand.Rand) fleet.TelemetryMemory {
	texts := []string{"01A2B3C4D5E6F708", "drv_06h25k5ae5x259563agwzsneem", `say "hi"`, "a<b>&c", "é", "\u2028", "tab\t", "\xff"}
	at := func() *time.Time {
		t := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(1e12)) * time.Microsecond)
		return &t
	}
	var m fleet.TelemetryMemory
	if rng.IntN(2) == 0 {
		m.IdlingSince = at()
	}
	m.Idling = rng.IntN(2) == 0
	if rng.IntN(2) == 0 {
		m.IgnitionOffSince = at()
	}
	for range rng.IntN(4) {
		a := fleet.AlarmSeen{Alarm: []string{"sos", "power_cut", "tow"}[rng.IntN(3)], At: *at()}
		if rng.IntN(2) == 0 {
			a.DeviceID = texts[rng.IntN(len(texts))]
		}
		m.Alarms = append(m.Alarms, a)
	}
	m.ReportsOdometer, m.ReportsEngineHours = rng.IntN(2) == 0, rng.IntN(2) == 0
	if rng.IntN(2) == 0 {
		m.DriverKey = texts[rng.IntN(len(texts))]
	}
	if rng.IntN(2) == 0 {
		m.ReportedDriverID = texts[rng.IntN(len(texts))]
	}
	return m
}

// TestTelemetryStoredAsEncodingJSONWritesIt: a vehicle's telemetry memory
// is stored byte for byte as encoding/json writes it (rows written before
// read the same), and reads back as encoding/json reads it, whether the
// fast reading takes it or encoding/json does.
func TestTelemetryStoredAsEncodingJSONWritesIt(t *testing.T) {
	is := is.New(t)
	rng := rand.New(rand.NewPCG(37, 14))
	fast := 0
	for range 2000 {
		m := randomMemory(rng)
		want, err := json.Marshal(m)
		is.NoErr(err)
		got := appendTelemetry(nil, &m)
		is.Equal(string(got), string(want))

		var back, ref fleet.TelemetryMemory
		is.NoErr(parseTelemetry(string(got), &back))
		is.NoErr(json.Unmarshal(got, &ref))
		is.True(reflect.DeepEqual(back, ref))                                                        // read as encoding/json reads it
		if !strings.ContainsFunc(string(got), func(r rune) bool { return r == '\\' || r >= 0x80 }) { // ASCII, nothing escaped: the fast reading takes it
			is.True(parseTelemetryFast(string(got), &back))
			is.True(reflect.DeepEqual(back, ref))
			fast++
		}
	}
	is.True(fast > 100)
	// Forms the fast reading leaves to encoding/json.
	for _, s := range []string{`{"idling_since":null}`, `{ "idling":true}`, `{"future_field":1,"idling":true}`, `{"driver_key":"a\"b"}`} {
		var back, ref fleet.TelemetryMemory
		is.NoErr(parseTelemetry(s, &back))
		is.NoErr(json.Unmarshal([]byte(s), &ref))
		is.True(reflect.DeepEqual(back, ref)) // s
	}
	var m fleet.TelemetryMemory
	is.True(parseTelemetry(`{"idling":`, &m) != nil) // cut: an error
}

// FuzzParseTelemetry: any text reads as encoding/json reads it, or is an
// error for both; never a panic.
func FuzzParseTelemetry(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		m := randomMemory(rng)
		f.Add(string(appendTelemetry(nil, &m)))
	}
	f.Fuzz(func(t *testing.T, s string) {
		var back, ref fleet.TelemetryMemory
		err := parseTelemetry(s, &back)
		rerr := json.Unmarshal([]byte(s), &ref)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("%q: %v, encoding/json: %v", s, err, rerr)
		}
		if err == nil && !reflect.DeepEqual(back, ref) {
			t.Fatalf("%q: %+v, encoding/json: %+v", s, back, ref)
		}
	})
}
