package prototest

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// TelematicsRow is one row of testdata/telematics.jsonl (see README.md
// here): a capture and the attributes, in the common vocabulary, that
// the position it names carries.
type TelematicsRow struct {
	Protocol  string       `json:"protocol"`
	Transport string       `json:"transport"`
	RawHex    string       `json:"raw_hex"`
	RawText   string       `json:"raw_text"`
	HTTP      *HTTPRequest `json:"http"`
	Expect    struct {
		IMEI       string         `json:"imei"`
		LoginHex   string         `json:"login_hex"`
		Attributes map[string]any `json:"attributes"`
		Points     []struct {
			Time string `json:"time"`
		} `json:"points"`
	} `json:"expect"`
	Source string `json:"source"`
}

// LoadTelematics reads every row of testdata/telematics.jsonl.
func LoadTelematics(t testing.TB) []TelematicsRow {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "telematics.jsonl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no telematics rows: %v", err)
	}
	var rows []TelematicsRow
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r TelematicsRow
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rows = append(rows, r)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// DecodeTelematics decodes a row of a stream protocol with proto as a
// listener would: the login first on the same connection where the row has
// one, then the message, cut into frames by Split on a stream. It returns
// the identifier the message names (or the connection's) and the messages
// decoded.
func DecodeTelematics(t *testing.T, proto devproto.Decoder, row TelematicsRow) (string, []devproto.Message) {
	t.Helper()
	s := devproto.Session{Now: Now}
	if row.Transport == "udp" {
		s.Transport = devproto.UDP
	}
	if row.Expect.LoginHex != "" {
		var login devproto.Message
		if err := proto.Decode(MustHex(t, row.Expect.LoginHex), &s, &login); err != nil || login.Kind != devproto.KindLogin {
			t.Fatalf("login: %v, kind %v", err, login.Kind)
		}
	}
	raw := []byte(row.RawText)
	if row.RawHex != "" {
		raw = MustHex(t, row.RawHex)
	}
	frames := [][]byte{raw}
	if s.Transport == devproto.TCP {
		frames = SplitAll(t, proto, raw)
	}
	var msgs []devproto.Message
	id := ""
	for _, frame := range frames {
		var m devproto.Message
		if err := proto.Decode(frame, &s, &m); err != nil {
			t.Fatalf("decode %q: %v", frame, err)
		}
		if m.Identifier != "" {
			id = m.Identifier
		}
		msgs = append(msgs, m)
	}
	if id == "" {
		id = s.Identifier
	}
	return id, msgs
}

// CheckTelematicsAttr compares one expected attribute with p's, as the
// README here says.
func CheckTelematicsAttr(t *testing.T, p devproto.Position, name string, want any) {
	t.Helper()
	got, ok := Attr(p, name)
	if !ok {
		t.Errorf("no attribute %s, want %v (have %s)", name, want, AttrList(p))
		return
	}
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > math.Max(0.01, math.Abs(w)*0.01) {
			t.Errorf("%s = %v (%T), want %v", name, got, got, w)
		}
	case bool:
		if got != w {
			t.Errorf("%s = %v (%T), want %v", name, got, got, w)
		}
	case string:
		g, ok := got.(string)
		switch {
		case !ok:
			t.Errorf("%s = %v (%T), want %q", name, got, got, w)
		case name == "alarm":
			found := false
			for _, word := range strings.Split(g, ",") {
				found = found || strings.EqualFold(word, w)
			}
			if !found {
				t.Errorf("alarm %q, want %q among its words", g, w)
			}
		case !strings.EqualFold(g, w):
			t.Errorf("%s = %q, want %q", name, g, w)
		}
	default:
		t.Fatalf("%s: expected %v of type %T", name, want, want)
	}
}

// AttrList is p's attributes, for a message.
func AttrList(p devproto.Position) string {
	var b strings.Builder
	for i, a := range p.Attrs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Name())
		b.WriteString("=")
		v, _ := json.Marshal(a.Value())
		b.Write(v)
	}
	return b.String()
}

// TelematicsSeeds is the bytes of every telematics row of a stream
// protocol, for its fuzz target's seeds.
func TelematicsSeeds(tb testing.TB, protocol string) [][]byte {
	var seeds [][]byte
	for _, row := range LoadTelematics(tb) {
		switch {
		case row.Protocol != protocol:
		case row.RawHex != "":
			seeds = append(seeds, MustHex(tb, row.RawHex))
		default:
			seeds = append(seeds, []byte(row.RawText))
		}
	}
	return seeds
}

// CheckTelematicsRows decodes every row of testdata/telematics.jsonl, each
// of protocol, with decode, and compares the attributes of the position
// it names — the last of its message, the one that becomes the device's
// last_report — with the row's: numbers within 1% or 0.01, booleans
// exactly, text in any case, an alarm among the comma-separated words.
// Every attribute of that position must be one the API accepts.
func CheckTelematicsRows(t *testing.T, protocol string, decode func(*testing.T, TelematicsRow) (string, []devproto.Message)) {
	rows := LoadTelematics(t)
	passed := 0
	for _, row := range rows {
		t.Run(row.Protocol+" "+row.Source, func(t *testing.T) {
			if row.Protocol != protocol {
				t.Fatalf("a row of %s", row.Protocol)
			}
			id, msgs := decode(t, row)
			if id != row.Expect.IMEI {
				t.Errorf("identifier %q, want %q", id, row.Expect.IMEI)
			}
			var last *devproto.Position
			for i := range msgs {
				if n := len(msgs[i].Positions); n > 0 {
					last = &msgs[i].Positions[n-1]
				}
			}
			if last == nil {
				t.Fatalf("no position")
			}
			if len(row.Expect.Points) > 0 && row.Expect.Points[0].Time != "" {
				want, err := time.Parse(time.RFC3339Nano, row.Expect.Points[0].Time)
				if err != nil {
					t.Fatal(err)
				}
				if !last.Time.Equal(want) {
					t.Errorf("the position named is of %v, want %v", last.Time, want)
				}
			}
			if len(row.Expect.Attributes) == 0 {
				t.Fatalf("a row without attributes")
			}
			for name, want := range row.Expect.Attributes {
				CheckTelematicsAttr(t, *last, name, want)
			}
			for _, a := range last.Attrs {
				if err := AttrProblem(a); err != "" {
					t.Errorf("attribute %s = %v: %s", a.Name(), a.Value(), err)
				}
			}
			passed++
		})
	}
	if passed == 0 {
		t.Errorf("no row of %s passed", protocol)
	}
}
