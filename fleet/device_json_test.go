package fleet_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
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
	attrs := p.Attributes
	if attrs == nil {
		attrs = map[string]any{}
	}
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
			Attributes: map[string]any{"io240": true, "battery": 12.6, "iccid": "8937204016201234567", "zero": 0.0, "neg": -1.5}}},
		{ReceivedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Protocol: "gt06", Reason: fleet.ReasonNoFix},
		{Reason: fleet.ReasonDuplicate, Position: fleet.DevicePosition{Latitude: math.Copysign(0, -1), Longitude: 1e-7,
			Speed: f(1e21), Heading: f(1e-6), Altitude: f(123456789.123456789),
			Attributes: map[string]any{"q\"uo\\te": "a\"b\\c", "ctl": "\x00\x01\x1f\t\n\r", "html": "<a href='x'>&</a>", "bad": "\xff\xfe",
				"sep": "\u2028\u2029", "uni": "Vilnius ąčęėįšųūž 漢字 😀", "small": 5e-324, "big": math.MaxFloat64, "e": 1.5e-10}}},
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
			Timestamp: at, Speed: &y, Attributes: map[string]any{key: text, key + "n": x}}}
		if want, got := reference(t, r), handWritten(t, r); !bytes.Equal(got, want) {
			t.Errorf("hand-written JSON differs:\n got %s\nwant %s", got, want)
		}
	})
}
