package prototest

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Row is one row of a protocol's testdata/corpus.jsonl (README.md here).
type Row struct {
	Protocol  string       `json:"protocol"`
	Transport string       `json:"transport"`
	RawHex    string       `json:"raw_hex"`
	RawText   string       `json:"raw_text"`
	HTTP      *HTTPRequest `json:"http"`
	Expect    Expect       `json:"expect"`
	Source    string       `json:"source"`
}

type HTTPRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

type Expect struct {
	// Has names the members the row states (a null one included).
	Has        map[string]bool `json:"-"`
	IMEI       *string         `json:"imei"`
	Kind       string          `json:"kind"`
	Points     []Point         `json:"points"`
	AckHex     *string         `json:"ack_hex"`
	AckText    *string         `json:"ack_text"`
	CRCOK      *bool           `json:"crc_ok"`
	HTTPStatus int             `json:"http_status"`
}

type Point struct {
	Lat        *float64       `json:"lat"`
	Lon        *float64       `json:"lon"`
	Time       string         `json:"time"`
	SpeedKmh   *float64       `json:"speed_kmh"`
	Course     *float64       `json:"course"`
	Altitude   *float64       `json:"altitude"`
	Valid      *bool          `json:"valid"`
	Satellites *int           `json:"satellites"`
	Attributes map[string]any `json:"attributes"`
}

// Raw is the row's bytes (TCP and UDP rows).
func (r Row) Raw(t *testing.T) []byte {
	t.Helper()
	if r.RawHex != "" {
		b, err := hex.DecodeString(r.RawHex)
		if err != nil {
			t.Fatalf("%s: raw_hex: %v", r.Source, err)
		}
		return b
	}
	return []byte(r.RawText)
}

// LoadCorpus reads testdata/corpus.jsonl.
func LoadCorpus(t *testing.T) []Row {
	name := filepath.Join("testdata", "corpus.jsonl")
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var members struct {
			Expect map[string]json.RawMessage `json:"expect"`
		}
		if err := json.Unmarshal(sc.Bytes(), &members); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.Expect.Has = map[string]bool{}
		for k := range members.Expect {
			r.Expect.Has[k] = true
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", name)
	}
	return rows
}

// Now is the server clock the corpus is decoded at: after every
// capture, so that no time is in the future.
var Now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// CheckPositions compares decoded positions with a row's expected points:
// coordinates within 1e-6°, time exactly, speed, course and altitude
// within 0.01, validity and satellites exactly, each where the row states
// it.
func CheckPositions(t *testing.T, row Row, got []devproto.Position) {
	t.Helper()
	want := row.Expect.Points
	if len(got) != len(want) {
		t.Errorf("%s: %d positions, want %d", row.Source, len(got), len(want))
		return
	}
	near := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
	for i, w := range want {
		g := got[i]
		at := fmt.Sprintf("%s point %d", row.Source, i)
		if w.Lat != nil && !near(g.Latitude, *w.Lat, 1e-6) {
			t.Errorf("%s: latitude %v, want %v", at, g.Latitude, *w.Lat)
		}
		if w.Lon != nil && !near(g.Longitude, *w.Lon, 1e-6) {
			t.Errorf("%s: longitude %v, want %v", at, g.Longitude, *w.Lon)
		}
		if w.Time != "" {
			wt, err := time.Parse(time.RFC3339Nano, w.Time)
			if err != nil {
				t.Fatalf("%s: time %q: %v", at, w.Time, err)
			}
			if !g.Time.Equal(wt) {
				t.Errorf("%s: time %v, want %v", at, g.Time, wt)
			}
		}
		if w.SpeedKmh != nil && (!g.HasSpeed || !near(g.Speed, *w.SpeedKmh, 0.01)) {
			t.Errorf("%s: speed %v (set %v), want %v km/h", at, g.Speed, g.HasSpeed, *w.SpeedKmh)
		}
		if w.Course != nil && (!g.HasHeading || !near(g.Heading, *w.Course, 0.01)) {
			t.Errorf("%s: heading %v (set %v), want %v", at, g.Heading, g.HasHeading, *w.Course)
		}
		if w.Altitude != nil && (!g.HasAltitude || !near(g.Altitude, *w.Altitude, 0.01)) {
			t.Errorf("%s: altitude %v (set %v), want %v", at, g.Altitude, g.HasAltitude, *w.Altitude)
		}
		if w.Valid != nil && g.Valid != *w.Valid {
			t.Errorf("%s: valid %v, want %v", at, g.Valid, *w.Valid)
		}
		if w.Satellites != nil && (!g.HasSatellites || g.Satellites != *w.Satellites) {
			t.Errorf("%s: satellites %v (set %v), want %v", at, g.Satellites, g.HasSatellites, *w.Satellites)
		}
	}
}

// CheckReply compares a message's reply with the row's expected
// acknowledgement, where the row states one (ack_hex or ack_text; null:
// none, so the reply must be empty).
func CheckReply(t *testing.T, row Row, got []byte) {
	t.Helper()
	switch {
	case row.Expect.Has["ack_hex"] && row.Expect.AckHex == nil, row.Expect.Has["ack_text"] && row.Expect.AckText == nil:
		if len(got) != 0 {
			t.Errorf("%s: reply %q, want none", row.Source, got)
		}
	case row.Expect.AckHex != nil:
		if hex.EncodeToString(got) != *row.Expect.AckHex {
			t.Errorf("%s: reply %x, want %s", row.Source, got, *row.Expect.AckHex)
		}
	case row.Expect.AckText != nil:
		if string(got) != *row.Expect.AckText {
			t.Errorf("%s: reply %q, want %q", row.Source, got, *row.Expect.AckText)
		}
	}
}
