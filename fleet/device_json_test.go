package fleet_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// reference is what encoding/json writes for a last report: the JSON the
// hand-written encoder must match byte for byte.
func reference(t testing.TB, r fleet.LastReport) []byte {
	t.Helper()
	type position struct {
		Latitude   float64        `json:"latitude"`
		Longitude  float64        `json:"longitude"`
		Timestamp  time.Time      `json:"timestamp"`
		Speed      *float64       `json:"speed"`
		Heading    *float64       `json:"heading"`
		Altitude   *float64       `json:"altitude"`
		Valid      bool           `json:"valid"`
		Satellites *int           `json:"satellites"`
		Attributes map[string]any `json:"attributes"`
	}
	p := r.Position
	attrs := p.Attrs.Map()
	var reason *string
	if r.Reason != "" {
		reason = &r.Reason
	}
	v := struct {
		ReceivedAt time.Time `json:"received_at"`
		Protocol   string    `json:"protocol"`
		Position   position  `json:"position"`
		Stored     bool      `json:"stored"`
		Reason     *string   `json:"reason"`
	}{r.ReceivedAt, r.Protocol, position{p.Latitude, p.Longitude, p.Timestamp, p.Speed, p.Heading, p.Altitude, p.Valid, p.Satellites, attrs}, r.Stored, reason}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func handWritten(t testing.TB, r fleet.LastReport) []byte {
	t.Helper()
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLastReportJSONIsEncodingJSONs(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	sats := 12
	at := time.Date(2026, 11, 22, 10, 15, 30, 250_000_000, time.UTC)
	for _, r := range []fleet.LastReport{
		{ReceivedAt: at, Protocol: "teltonika", Stored: true, Position: fleet.DevicePosition{Latitude: 52.52, Longitude: 13.405, Timestamp: at.Add(-time.Second),
			Speed: f(42.5), Heading: f(0), Altitude: f(-3.25), Valid: true, Satellites: &sats,
			Attrs: fleet.Attributes{fleet.BoolAttr("io240", true), fleet.NumberAttr("battery", 12.6), fleet.TextAttr("iccid", "8937204016201234567"),
				fleet.NumberAttr("zero", 0), fleet.NumberAttr("neg", -1.5)}}},
		{ReceivedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Protocol: "gt06", Reason: fleet.ReasonNoFix},
		{Reason: fleet.ReasonDuplicate, Position: fleet.DevicePosition{Latitude: math.Copysign(0, -1), Longitude: 1e-7,
			Speed: f(1e21), Heading: f(1e-6), Altitude: f(123456789.123456789),
			Attrs: fleet.Attributes{fleet.TextAttr("q\"uo\\te", "a\"b\\c"), fleet.TextAttr("ctl", "\x00\x01\x1f\t\n\r"), fleet.TextAttr("html", "<a href='x'>&</a>"),
				fleet.TextAttr("bad", "\xff\xfe"), fleet.TextAttr("sep", "\u2028\u2029"), fleet.TextAttr("uni", "Vilnius ąčęėįšųūž 漢字 😀"),
				fleet.NumberAttr("small", 5e-324), fleet.NumberAttr("big", math.MaxFloat64), fleet.NumberAttr("e", 1.5e-10)}}},
	} {
		want, got := reference(t, r), handWritten(t, r)
		if !bytes.Equal(got, want) {
			t.Errorf("hand-written JSON differs:\n got %s\nwant %s", got, want)
		}
		var back fleet.LastReport
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("does not decode: %v: %s", err, got)
		}
	}
	_, err := fleet.LastReport{Position: fleet.DevicePosition{Latitude: math.NaN()}}.MarshalJSON()
	if err == nil {
		t.Error("NaN was written")
	}
}

// FuzzLastReportJSON: whatever the text and numbers, the hand-written JSON
// is encoding/json's.
func FuzzLastReportJSON(f *testing.F) {
	f.Add("teltonika", "io1", "text", 52.5, 1e-7, int64(0))
	f.Add("\x00\"\\", "\xff", "\u2028<>&", -1e21, 0.0, int64(1_700_000_000_123_456_789))
	f.Add("", "", "😀\xed\xa0\x80", 5e-324, math.MaxFloat64, int64(-62135596800_000_000_0))
	f.Fuzz(func(t *testing.T, protocol, key, text string, x, y float64, ns int64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return
		}
		at := time.Unix(0, ns).UTC()
		if at.Year() < 0 || at.Year() > 9999 {
			return
		}
		r := fleet.LastReport{ReceivedAt: at, Protocol: protocol, Reason: text, Position: fleet.DevicePosition{Latitude: x, Longitude: y,
			Timestamp: at, Speed: &y, Attrs: fleet.Attributes{fleet.TextAttr(key, text), fleet.NumberAttr(key+"n", x)}}}
		if want, got := reference(t, r), handWritten(t, r); !bytes.Equal(got, want) {
			t.Errorf("hand-written JSON differs:\n got %s\nwant %s", got, want)
		}
	})
}

// A last report stored before its attributes were one slice (encoding/json
// writing a map) reads back with the same attributes, and is written again
// byte for byte as it was stored.
func TestLastReportStoredReadsBack(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		stored string
		attrs  fleet.Attributes
	}{
		{`{"received_at":"2026-11-22T10:15:30.25Z","protocol":"teltonika","position":{"latitude":52.52,"longitude":13.405,` +
			`"timestamp":"2026-11-22T10:15:29.25Z","speed":42.5,"heading":0,"altitude":-3.25,"valid":true,"satellites":12,` +
			`"attributes":{"battery":12.6,"iccid":"8937204016201234567","io240":true,"neg":-1.5,"odometer":123456789,"q\"uo\\te":"a\"b\\c\n<&>é","zero":0}},` +
			`"stored":true,"reason":null}`,
			fleet.Attributes{fleet.NumberAttr("battery", 12.6), fleet.TextAttr("iccid", "8937204016201234567"), fleet.BoolAttr("io240", true),
				fleet.NumberAttr("neg", -1.5), fleet.NumberAttr("odometer", 123456789), fleet.TextAttr("q\"uo\\te", "a\"b\\c\n<&>é"), fleet.NumberAttr("zero", 0)}},
		{`{"received_at":"2026-01-02T03:04:05Z","protocol":"gt06","position":{"latitude":0,"longitude":0,"timestamp":"0001-01-01T00:00:00Z",` +
			`"speed":null,"heading":null,"altitude":null,"valid":false,"satellites":null,"attributes":{}},"stored":false,"reason":"no_fix"}`,
			fleet.Attributes{}},
	} {
		var r fleet.LastReport
		is.NoErr(json.Unmarshal([]byte(c.stored), &r))
		is.Equal(r.Position.Attrs, c.attrs)
		b, err := r.MarshalJSON() // as a store writes it
		is.NoErr(err)
		is.Equal(string(b), c.stored) // the same bytes
	}
}
