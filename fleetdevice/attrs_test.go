package fleetdevice

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// apiAttrNameRule is API.md §14's rule for an attribute's name.
var apiAttrNameRule = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// vocabAlarms is §14's list of alarm words.
var vocabAlarms = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`sos power_cut power_restored low_power low_battery vibration
		movement overspeed tow tampering jamming door hard_acceleration hard_braking hard_cornering
		accident fall_down fatigue_driving temperature geofence_enter geofence_exit general`) {
		vocabAlarms[w] = true
	}
}

// attrProblem is why the API would refuse a, or why a breaks the
// vocabulary; "" when it is sound: a name of §14's rule, a finite number,
// a boolean of 0 or 1, text of at most 64 bytes of UTF-8 without control
// characters; a name of the vocabulary with the vocabulary's type, and an
// alarm of the vocabulary's words.
func attrProblem(a devproto.Attribute) string {
	name := a.Name()
	if !apiAttrNameRule.MatchString(name) {
		return "a name the API refuses"
	}
	switch a.Kind {
	case devproto.AttrNumber:
		if math.IsNaN(a.Num) || math.IsInf(a.Num, 0) {
			return "a number that is not finite"
		}
	case devproto.AttrBool:
		if a.Num != 0 && a.Num != 1 {
			return "a boolean of " + strconv.FormatFloat(a.Num, 'g', -1, 64)
		}
	case devproto.AttrString:
		if !devproto.AttrTextOK(a.Str) {
			return "a text the API refuses"
		}
	default:
		return "no type"
	}
	if kind, ok := devproto.VocabKind(name); ok && kind != a.Kind {
		return "not of the vocabulary's type"
	}
	if name == "alarm" {
		for _, w := range strings.Split(a.Str, ",") {
			if !vocabAlarms[w] {
				return "alarm word " + strconv.Quote(w) + " not in the vocabulary"
			}
		}
	}
	return ""
}

// checkAttrsSound fails when an attribute of m's positions is not sound
// (attrProblem).
func checkAttrsSound(t testing.TB, m *devproto.Message) {
	t.Helper()
	for _, p := range m.Positions {
		for _, a := range p.Attrs {
			if err := attrProblem(a); err != "" {
				t.Fatalf("attribute %s = %#v: %s", a.Name(), a.Value(), err)
			}
		}
	}
}

// TestEveryAttributeIsOneTheAPIAccepts decodes everything the tests hold —
// the corpus of every protocol, Traccar's captures, the telematics rows,
// and records of every Teltonika codec with every element the decoder
// names — and checks every attribute any decoder produced (attrProblem).
// The fuzz targets check the same of arbitrary input.
func TestEveryAttributeIsOneTheAPIAccepts(t *testing.T) {
	names := map[string]bool{}
	check := func(t *testing.T, m *devproto.Message) {
		t.Helper()
		checkAttrsSound(t, m)
		for _, p := range m.Positions {
			for _, a := range p.Attrs {
				names[a.Name()] = true
			}
		}
	}
	// Every stream protocol's corpus, as a stream after the connection's
	// login, and each row alone as a datagram.
	for _, p := range Protocols() {
		proto := p.Decoder
		if proto == nil {
			continue // OsmAnd, below
		}
		for _, row := range loadCorpus(t, proto.Name()+".jsonl") {
			raw := row.raw(t)
			s := devproto.Session{Identifier: binLoginIMEI, Now: corpusNow}
			if row.Transport == "udp" {
				s.Transport = devproto.UDP
				var m devproto.Message
				if proto.Decode(raw, &s, &m) == nil {
					check(t, &m)
				}
				continue
			}
			for rest := raw; len(rest) > 0; {
				n, err := proto.Split(rest)
				if err != nil || n == 0 {
					break
				}
				var m devproto.Message
				if proto.Decode(rest[:n], &s, &m) == nil {
					check(t, &m)
				}
				rest = rest[n:]
			}
		}
	}
	for _, row := range loadCorpus(t, "osmand.jsonl") {
		h := row.HTTP
		var m devproto.Message
		r := OsmAndRequest{Method: h.Method, RawQuery: h.Query, ContentType: h.Headers["Content-Type"], Body: []byte(h.Body)}
		if _, err := DecodeOsmAnd(r, &devproto.Session{Transport: devproto.HTTP, Now: corpusNow}, &m); err == nil {
			check(t, &m)
		}
	}
	// Traccar's captures of the binary protocols.
	for file, proto := range map[string]Decoder{"teltonika.txt": Teltonika(), "gt06.txt": GT06()} {
		b, err := os.ReadFile(filepath.Join("testdata", "traccar", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) != 4 || strings.HasPrefix(line, "#") || f[2] != "ok" {
				continue
			}
			raw := binMustHex(t, f[3])
			s := devproto.Session{Identifier: binLoginIMEI, Now: corpusNow}
			frames := [][]byte{raw}
			if f[1] == "udp" {
				s.Transport = devproto.UDP
			} else {
				frames = binSplitAll(t, proto, raw)
			}
			for _, frame := range frames {
				var m devproto.Message
				if proto.Decode(frame, &s, &m) == nil {
					check(t, &m)
				}
			}
		}
	}
	for _, row := range loadTelematics(t) {
		_, msgs := decodeTelematics(t, row)
		for i := range msgs {
			check(t, &msgs[i])
		}
	}
	// Records with every element Teltonika's table names, and beacons
	// and tags, in each codec.
	for _, codec := range []byte{tkCodec8, tkCodec8E, tkCodec16} {
		recs := []tkRec{tkFullIO(0), tkFullIO(1), tkRealistic(2)}
		if codec == tkCodec8E {
			recs[2].variable = []tkIOValue{{256, 0}, {385, 1}, {548, 2}, {9999, 3}}
			recs[2].blobs = [][]byte{[]byte("WVWZZZ1JZXW000001"), tkBeaconBlob(), tkTagBlob(), make([]byte, 40)}
		}
		var m devproto.Message
		if err := Teltonika().Decode(tkFrame(tkBody(codec, recs)), &devproto.Session{Identifier: "x"}, &m); err != nil {
			t.Fatal(err)
		}
		check(t, &m)
	}
	for _, want := range []string{"ignition", "power_v", "odometer_km", "engine_hours", "driver_identifier",
		"alarm", "battery_level", "event", "din1", "dout1", "hdop", "accuracy_m", "io241", "beacon1_uuid", "tag1_rssi"} {
		if !names[want] {
			t.Errorf("no decoder produced %s", want)
		}
	}
}
