package fleetdevice

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

// telematicsRow is one row of testdata/telematics/*.jsonl (see its
// README): a capture and the attributes, in the common vocabulary, that
// the position it names carries.
type telematicsRow struct {
	Protocol  string      `json:"protocol"`
	Transport string      `json:"transport"`
	RawHex    string      `json:"raw_hex"`
	RawText   string      `json:"raw_text"`
	HTTP      *corpusHTTP `json:"http"`
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

// loadTelematics reads every row of testdata/telematics.
func loadTelematics(t testing.TB) []telematicsRow {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "telematics", "*.jsonl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no telematics rows: %v", err)
	}
	var rows []telematicsRow
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r telematicsRow
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

// decodeTelematics decodes a row as a listener would: the login first on
// the same connection where the row has one, then the message, cut into
// frames by Split on a stream. It returns the identifier the message
// names (or the connection's) and the messages decoded.
func decodeTelematics(t *testing.T, row telematicsRow) (string, []devproto.Message) {
	t.Helper()
	if row.Protocol == "osmand" {
		h := row.HTTP
		var m devproto.Message
		s := devproto.Session{Transport: devproto.HTTP, Now: corpusNow}
		r := OsmAndRequest{Method: h.Method, RawQuery: h.Query, ContentType: h.Headers["Content-Type"], Body: []byte(h.Body)}
		if _, err := DecodeOsmAnd(r, &s, &m); err != nil {
			t.Fatalf("decode: %v", err)
		}
		return m.Identifier, []devproto.Message{m}
	}
	p, _ := ProtocolNamed(row.Protocol)
	proto := p.Decoder
	if proto == nil {
		t.Fatalf("no protocol %q", row.Protocol)
	}
	s := devproto.Session{Now: corpusNow}
	if row.Transport == "udp" {
		s.Transport = devproto.UDP
	}
	if row.Expect.LoginHex != "" {
		var login devproto.Message
		if err := proto.Decode(binMustHex(t, row.Expect.LoginHex), &s, &login); err != nil || login.Kind != devproto.KindLogin {
			t.Fatalf("login: %v, kind %v", err, login.Kind)
		}
	}
	raw := []byte(row.RawText)
	if row.RawHex != "" {
		raw = binMustHex(t, row.RawHex)
	}
	frames := [][]byte{raw}
	if s.Transport == devproto.TCP {
		frames = binSplitAll(t, proto, raw)
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

// TestTelematicsRows decodes every row of testdata/telematics and compares
// the attributes of the position it names — the last of its message, the
// one that becomes the device's last_report — with the row's: numbers
// within 1% or 0.01, booleans exactly, text in any case, an alarm among
// the comma-separated words. Every attribute of that position must be one
// the API accepts.
func TestTelematicsRows(t *testing.T) {
	rows := loadTelematics(t)
	perProtocol := map[string]int{}
	for _, row := range rows {
		t.Run(row.Protocol+" "+row.Source, func(t *testing.T) {
			id, msgs := decodeTelematics(t, row)
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
				checkTelematicsAttr(t, *last, name, want)
			}
			for _, a := range last.Attrs {
				if err := attrProblem(a); err != "" {
					t.Errorf("attribute %s = %v: %s", a.Name(), a.Value(), err)
				}
			}
			perProtocol[row.Protocol]++
		})
	}
	for _, p := range []string{"teltonika", "gt06", "h02", "queclink", "gps103", "osmand"} {
		if perProtocol[p] == 0 {
			t.Errorf("no row of %s passed", p)
		}
	}
}

// checkTelematicsAttr compares one expected attribute with p's, as the
// rows' README says.
func checkTelematicsAttr(t *testing.T, p devproto.Position, name string, want any) {
	t.Helper()
	got, ok := attr(p, name)
	if !ok {
		t.Errorf("no attribute %s, want %v (have %s)", name, want, attrList(p))
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

// attrList is p's attributes, for a message.
func attrList(p devproto.Position) string {
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

// telematicsSeeds is the bytes of every telematics row of a stream
// protocol, for its fuzz target's seeds.
func telematicsSeeds(tb testing.TB, protocol string) [][]byte {
	var seeds [][]byte
	for _, row := range loadTelematics(tb) {
		switch {
		case row.Protocol != protocol:
		case row.RawHex != "":
			seeds = append(seeds, binMustHex(tb, row.RawHex))
		default:
			seeds = append(seeds, []byte(row.RawText))
		}
	}
	return seeds
}
