package teltonika

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
	"github.com/matryer/is"
)

// TestTeltonikaCorpus decodes every Teltonika capture of the corpus and
// compares the message with the row: the identifier, each position's
// values and I/O attributes, the reply byte for byte, and a frame whose
// CRC fails refused with ErrChecksum.
func TestTeltonikaCorpus(t *testing.T) {
	rows := prototest.LoadCorpus(t)
	ios := prototest.LoadRows[teltonikaIO](t)
	if len(ios) != len(rows) {
		t.Fatalf("%d rows, %d read again", len(rows), len(ios))
	}
	var m devproto.Message // reused across rows, as a listener does
	for i, row := range rows {
		t.Run(row.Source, func(t *testing.T) {
			is := is.New(t)
			raw := row.Raw(t)
			s := devproto.Session{Now: prototest.Now}
			if row.Transport == "udp" {
				s.Transport = devproto.UDP
			} else {
				// A stream frame is what Split finds.
				n, err := Decoder{}.Split(raw)
				is.NoErr(err)
				is.Equal(n, len(raw))
			}
			if row.Expect.IMEI == nil {
				s.Identifier = prototest.LoginIMEI
			}
			m.Reset()
			err := Decoder{}.Decode(raw, &s, &m)
			if row.Expect.CRCOK != nil && !*row.Expect.CRCOK {
				is.Equal(err, devproto.ErrChecksum)
				return
			}
			is.NoErr(err)
			switch {
			case row.Expect.Kind == "login":
				is.Equal(m.Kind, devproto.KindLogin)
				is.Equal(m.Identifier, *row.Expect.IMEI)
				is.Equal(s.Identifier, *row.Expect.IMEI) // the connection is named
				is.Equal(m.Reject, []byte{0})
			case row.Expect.IMEI != nil:
				is.Equal(m.Kind, devproto.KindPositions)
				is.Equal(m.Identifier, *row.Expect.IMEI) // a datagram names its sender
			default:
				is.Equal(m.Kind, devproto.KindPositions)
				is.Equal(m.Identifier, "") // named by the login
				is.Equal(s.Identifier, prototest.LoginIMEI)
			}
			prototest.CheckPositions(t, row, m.Positions)
			prototest.CheckReply(t, row, m.Reply)
			checkTeltonikaIO(t, row, ios[i], m.Positions)
		})
	}
}

// teltonikaIO is what a Teltonika row states of each point's I/O
// elements, which the shared row type does not hold.
type teltonikaIO struct {
	Expect struct {
		Points []struct {
			Priority *float64           `json:"priority"`
			EventIO  *float64           `json:"event_io"`
			IO       map[string]float64 `json:"io"`
		} `json:"points"`
	} `json:"expect"`
}

// checkTeltonikaIO compares the I/O values a row states (in the corpus's
// names and units) with the attributes decoded (in the common vocabulary's
// names and units, API.md §14), and the record's priority and event.
func checkTeltonikaIO(t *testing.T, row prototest.Row, io teltonikaIO, got []devproto.Position) {
	t.Helper()
	names := map[string]struct {
		key   string
		scale float64
		bool  bool
	}{
		"ignition":           {"ignition", 1, true},
		"movement":           {"motion", 1, true},
		"ext_voltage_mV":     {"power_v", 1000, false},
		"battery_voltage_mV": {"battery_v", 1000, false},
		"total_odometer_m":   {"odometer_km", 1000, false},
		"trip_odometer_m":    {"trip_odometer_km", 1000, false},
		"gsm_signal":         {"rssi", 1, false},
		"pdop_x10":           {"pdop", 10, false},
		"hdop_x10":           {"hdop", 10, false},
	}
	for i, w := range io.Expect.Points {
		if i >= len(got) {
			return
		}
		attrs := map[string]devproto.Attribute{}
		for _, a := range got[i].Attrs {
			attrs[a.Name()] = a
		}
		for k, v := range w.IO {
			n, ok := names[k]
			if !ok {
				t.Fatalf("%s: unknown I/O name %q in the corpus", row.Source, k)
			}
			a, ok := attrs[n.key]
			switch {
			case !ok:
				t.Errorf("%s point %d: no %s", row.Source, i, n.key)
			case n.bool:
				if a.Kind != devproto.AttrBool || a.Value() != (v != 0) {
					t.Errorf("%s point %d: %s = %v, want %v", row.Source, i, n.key, a.Value(), v != 0)
				}
			default:
				if a.Kind != devproto.AttrNumber || math.Abs(a.Num-v/n.scale) > 1e-9 {
					t.Errorf("%s point %d: %s = %v, want %v", row.Source, i, n.key, a.Value(), v/n.scale)
				}
			}
		}
		if w.Priority != nil && attrs["priority"].Num != *w.Priority {
			t.Errorf("%s point %d: priority %v, want %v", row.Source, i, attrs["priority"].Num, *w.Priority)
		}
		if w.EventIO != nil && attrs["event"].Str != strconv.Itoa(int(*w.EventIO)) {
			t.Errorf("%s point %d: event %q, want %v", row.Source, i, attrs["event"].Str, *w.EventIO)
		}
	}
}

// TestTeltonikaTraccarCaptures runs every capture of Traccar's Teltonika
// tests: framing, CRC, positions on Earth, and the values Traccar asserts
// that do not depend on the device's model.
func TestTeltonikaTraccarCaptures(t *testing.T) {
	prototest.RunCaptures(t, Decoder{}, []prototest.CaptureCheck{
		{Line: 21, Name: "tag1_voltage", Want: 3090.0},
		{Line: 28, Name: "tag1_battery", Want: 3030.0},
	})
}

// tkTCPRows is every TCP row of the corpus's bytes.
func tkTCPRows(t *testing.T) [][]byte {
	var frames [][]byte
	for _, row := range prototest.LoadCorpus(t) {
		if row.Transport == "tcp" {
			frames = append(frames, row.Raw(t))
		}
	}
	return frames
}

// TestTeltonikaSplitStream: logins, keep-alives, data frames of every
// codec and a command response, sent as one stream, come out of Split as
// they went in, however the stream is cut.
func TestTeltonikaSplitStream(t *testing.T) {
	frames := [][]byte{tkLogin("356307042441013"), {0xFF}}
	frames = append(frames, tkTCPRows(t)...)
	frames = append(frames,
		tkFrame(tkBody(tkCodec8, []tkRec{tkRealistic(1), tkRealistic(2)})),
		[]byte{0xFF},
		prototest.MustHex(t, "00000000000000100c010600000008010300010015d5c5010000d988"), // a command's answer (codec 12)
		tkLogin("FMB-1"),
	)
	prototest.CheckSplitStream(t, Decoder{}, frames)
}

// TestTeltonikaSplitGarbage: bytes that cannot start a frame are garbage
// as soon as they show it; the start of a frame asks for more.
func TestTeltonikaSplitGarbage(t *testing.T) {
	is := is.New(t)
	for _, b := range []string{
		"474554202f20485454502f312e310d0a", // GET / HTTP/1.1
		"01",
		"7f00",
		"00000001",               // a preamble that is not zero
		"000361620162",           // a login with a control character
		"0003612062",             // ... or a space
		"0000000000000010990100", // an unknown codec
		"0000000000000002",       // a length no frame has
	} {
		n, err := Decoder{}.Split(prototest.MustHex(t, b))
		is.Equal(err, devproto.ErrGarbage) // b
		is.Equal(n, 0)
	}
	for _, b := range []string{"", "00", "000000", "00000000000000", "000f3132", "00000000000000110801"} {
		n, err := Decoder{}.Split(prototest.MustHex(t, b))
		is.NoErr(err)  // b
		is.Equal(n, 0) // b: more bytes needed
	}
	// A good frame, then garbage: the frame, then ErrGarbage.
	stream := append(tkLogin("123456789012345"), "GET /"...)
	n, err := Decoder{}.Split(stream)
	is.NoErr(err)
	is.Equal(n, 17)
	_, err = Decoder{}.Split(stream[n:])
	is.Equal(err, devproto.ErrGarbage)
}

// TestTeltonikaSplitHugeLength: a length beyond MaxFrame is garbage at
// once, without allocating; the largest allowed length waits for its
// bytes.
func TestTeltonikaSplitHugeLength(t *testing.T) {
	is := is.New(t)
	huge := prototest.MustHex(t, "000000007fffffff08")
	var n int
	var err error
	allocs := testing.AllocsPerRun(100, func() { n, err = Decoder{}.Split(huge) })
	is.Equal(err, devproto.ErrGarbage)
	is.Equal(n, 0)
	is.Equal(allocs, 0.0)

	max := Decoder{}.MaxFrame()
	header := binary.BigEndian.AppendUint32([]byte{0, 0, 0, 0}, uint32(max-12))
	n, err = Decoder{}.Split(append(header, tkCodec8))
	is.NoErr(err) // the largest frame: wait for it
	is.Equal(n, 0)
	header = binary.BigEndian.AppendUint32([]byte{0, 0, 0, 0}, uint32(max-11))
	_, err = Decoder{}.Split(append(header, tkCodec8))
	is.Equal(err, devproto.ErrGarbage) // one byte more
}

// TestTeltonikaKeepAliveAndLogin: the keep-alive has no answer; a login
// names the connection, answered 01 (00 to refuse), whatever the length
// of its identifier; a login that is not one is garbage.
func TestTeltonikaKeepAliveAndLogin(t *testing.T) {
	is := is.New(t)
	var s devproto.Session
	var m devproto.Message
	is.NoErr(Decoder{}.Decode([]byte{0xFF}, &s, &m))
	is.Equal(m.Kind, devproto.KindHeartbeat)
	is.Equal(len(m.Reply), 0)

	for _, id := range []string{"356307042441013", "35630704244101", "FMB920-7", "1234567890123456", strings.Repeat("7", 255)} {
		n, err := Decoder{}.Split(tkLogin(id))
		is.NoErr(err)
		is.Equal(n, 2+len(id))
		s, m = devproto.Session{}, devproto.Message{}
		is.NoErr(Decoder{}.Decode(tkLogin(id), &s, &m))
		is.Equal(m.Kind, devproto.KindLogin)
		is.Equal(m.Identifier, id)
		is.Equal(s.Identifier, id)
		is.Equal(m.Reply, []byte{1})
		is.Equal(m.Reject, []byte{0})
	}
	for _, b := range [][]byte{
		append(tkLogin("12345"), '6'),            // longer than it says
		tkLogin("12345")[:5],                     // shorter
		tkLogin("12\x0045"),                      // a NUL
		tkLogin("12 45"),                         // a space
		tkLogin(string([]byte{'1', 0xC3, 0xA9})), // not ASCII
	} {
		s, m = devproto.Session{}, devproto.Message{}
		is.Equal(Decoder{}.Decode(b, &s, &m), devproto.ErrGarbage) // b
		is.Equal(s.Identifier, "")
	}
}

// TestTeltonikaEncodedRecords decodes records of each codec, over TCP and
// UDP, made with random values, and finds every value in the API's units.
func TestTeltonikaEncodedRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, codec := range []byte{tkCodec8, tkCodec8E, tkCodec16} {
		for round := 0; round < 50; round++ {
			recs := make([]tkRec, 1+rng.IntN(12))
			for i := range recs {
				r := tkRealistic(i)
				r.ms = rng.Int64N(2_000_000_000_000)
				r.priority = byte(rng.IntN(3))
				r.lon = int32(rng.IntN(3_600_000_001) - 1_800_000_000)
				r.lat = int32(rng.IntN(1_800_000_001) - 900_000_000)
				r.alt = int16(rng.IntN(65536) - 32768)
				r.angle = uint16(rng.IntN(360))
				r.sats = byte(rng.IntN(3) * rng.IntN(20))
				r.speed = uint16(rng.IntN(300))
				r.event = uint16(rng.IntN(256))
				r.io[0] = append(r.io[0], tkIOValue{uint16(150 + rng.IntN(20)), uint64(rng.IntN(256))})
				if codec != tkCodec8 {
					r.io[1] = append(r.io[1], tkIOValue{uint16(1000 + rng.IntN(1000)), uint64(rng.IntN(65536))})
				}
				if codec == tkCodec8E {
					r.variable = []tkIOValue{{256, 0}, {9999, 1}}
					r.blobs = [][]byte{[]byte("WVWZZZ1JZXW000001"), {0xDE, 0xAD}}
				}
				recs[i] = r
			}
			body := tkBody(codec, recs)
			for _, udp := range []bool{false, true} {
				s := devproto.Session{Identifier: "x"}
				frame := tkFrame(body)
				if udp {
					s = devproto.Session{Transport: devproto.UDP}
					frame = tkDatagram(0xBEEF, 7, "352093081452251", body)
				}
				var m devproto.Message
				if err := (Decoder{}).Decode(frame, &s, &m); err != nil {
					t.Fatalf("codec %#x: %v", codec, err)
				}
				tkCheckEncoded(t, codec, recs, &m)
				if udp {
					if m.Identifier != "352093081452251" || !bytes.Equal(m.Reply, []byte{0, 5, 0xBE, 0xEF, 1, 7, byte(len(recs))}) {
						t.Fatalf("datagram: identifier %q, reply %x", m.Identifier, m.Reply)
					}
				} else if !bytes.Equal(m.Reply, []byte{0, 0, 0, byte(len(recs))}) {
					t.Fatalf("reply %x", m.Reply)
				}
			}
		}
	}
}

// tkCheckEncoded compares decoded positions with the records encoded.
func tkCheckEncoded(t *testing.T, codec byte, recs []tkRec, m *devproto.Message) {
	t.Helper()
	if m.Kind != devproto.KindPositions || len(m.Positions) != len(recs) {
		t.Fatalf("kind %v, %d positions, want %d", m.Kind, len(m.Positions), len(recs))
	}
	for i, r := range recs {
		p := m.Positions[i]
		want := devproto.Position{
			Time:     time.UnixMilli(r.ms).UTC(),
			Latitude: float64(r.lat) / 1e7, Longitude: float64(r.lon) / 1e7,
			Speed: float64(r.speed), HasSpeed: true,
			Heading: float64(r.angle), HasHeading: true,
			Altitude: float64(r.alt), HasAltitude: true,
			Satellites: int(r.sats), HasSatellites: true,
			Valid: r.sats != 0,
		}
		got := p
		got.Attrs = nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("codec %#x record %d: %+v, want %+v", codec, i, got, want)
		}
		attrs := map[string]any{}
		for _, a := range p.Attrs {
			attrs[a.Name()] = a.Value()
		}
		for name, v := range map[string]any{
			"priority": float64(r.priority), "event": strconv.Itoa(int(r.event)),
			"ignition": true, "motion": true, "rssi": 5.0, "din1": false,
			"pdop": 0.9, "hdop": 0.6, "power_v": 13.821, "battery_v": 4.05,
			"trip_odometer_km": 1.234, "odometer_km": 8765.432, "io241": 24602.0,
			"io80": 1.0, "io24": 54.0, "io238": 123456789012.0,
		} {
			if attrs[name] != v {
				t.Fatalf("codec %#x record %d: %s = %v, want %v", codec, i, name, attrs[name], v)
			}
		}
		for _, g := range r.io {
			for _, e := range g {
				if e.id >= 150 && e.id < 170 || e.id >= 1000 {
					name := "io" + strconv.Itoa(int(e.id))
					if attrs[name] != float64(e.value) {
						t.Fatalf("codec %#x record %d: %s = %v, want %v", codec, i, name, attrs[name], e.value)
					}
				}
			}
		}
		if codec == tkCodec8E && (attrs["vin"] != "WVWZZZ1JZXW000001" || attrs["io9999"] != "dead") {
			t.Fatalf("variable elements: %v, %v", attrs["vin"], attrs["io9999"])
		}
	}
}

// TestTeltonikaOffEarth: a record whose coordinates are not on Earth gives
// no position, and the frame is still acknowledged whole.
func TestTeltonikaOffEarth(t *testing.T) {
	is := is.New(t)
	bad := tkRealistic(0)
	bad.lat = 950_000_000 // 95°
	frame := tkFrame(tkBody(tkCodec8, []tkRec{tkRealistic(1), bad, tkRealistic(2)}))
	var m devproto.Message
	is.NoErr(Decoder{}.Decode(frame, &devproto.Session{Identifier: "x"}, &m))
	is.Equal(len(m.Positions), 2)
	is.Equal(m.Positions[1].Time, time.UnixMilli(tkRealistic(2).ms).UTC())
	is.Equal(m.Reply, []byte{0, 0, 0, 3})
}

// TestTeltonikaCommandResponse: the answer to a command (codecs 12, 13,
// 14) is a message of no position, not acknowledged.
func TestTeltonikaCommandResponse(t *testing.T) {
	is := is.New(t)
	for _, codec := range []byte{tkCodec12, tkCodec13, tkCodec14} {
		body := []byte{codec, 1, 0x06, 0, 0, 0, 2, 'O', 'K', 1}
		var m devproto.Message
		is.NoErr(Decoder{}.Decode(tkFrame(body), &devproto.Session{Identifier: "x"}, &m))
		is.Equal(m.Kind, devproto.KindOther)
		is.Equal(len(m.Positions), 0)
		is.Equal(len(m.Reply), 0)
	}
}

// TestTeltonikaMalformedRecords: a frame whose records do not fill it
// exactly, or whose two counts differ, is garbage, even with a good CRC.
func TestTeltonikaMalformedRecords(t *testing.T) {
	is := is.New(t)
	body := tkBody(tkCodec8, []tkRec{tkRealistic(0), tkRealistic(1)})
	for name, b := range map[string][]byte{
		"counts differ":  append(bytes.Clone(body[:len(body)-1]), 3),
		"a byte short":   append(bytes.Clone(body[:len(body)-2]), 2),
		"a byte more":    append(bytes.Clone(body[:len(body)-1]), 0, 2),
		"count too high": append([]byte{tkCodec8, 3}, append(bytes.Clone(body[2:len(body)-1]), 3)...),
		"unknown codec":  append([]byte{0x09}, body[1:]...),
	} {
		var m devproto.Message
		err := Decoder{}.Decode(tkFrame(b), &devproto.Session{Identifier: "x"}, &m)
		is.Equal(err, devproto.ErrGarbage) // name
		is.Equal(len(m.Positions), 0)
		_ = name
	}
	// A datagram cut short, or naming no device.
	d := tkDatagram(1, 1, "352093081452251", body)
	for _, b := range [][]byte{d[:len(d)-1], d[:9], tkDatagram(1, 1, "", body)} {
		var m devproto.Message
		is.Equal(Decoder{}.Decode(b, &devproto.Session{Transport: devproto.UDP}, &m), devproto.ErrGarbage)
	}
}

// TestTeltonikaReusedMessage: a Message that held a large frame decodes a
// small one exactly as a fresh one does.
func TestTeltonikaReusedMessage(t *testing.T) {
	is := is.New(t)
	var big []tkRec
	for i := range 10 {
		big = append(big, tkRealistic(i))
	}
	small := tkRealistic(20)
	small.io = [4][]tkIOValue{{{239, 0}}}
	var reused, fresh devproto.Message
	s := devproto.Session{Identifier: "x"}
	is.NoErr(Decoder{}.Decode(tkFrame(tkBody(tkCodec8, big)), &s, &reused))
	reused.Reset()
	is.NoErr(Decoder{}.Decode(tkFrame(tkBody(tkCodec8, []tkRec{small})), &s, &reused))
	is.NoErr(Decoder{}.Decode(tkFrame(tkBody(tkCodec8, []tkRec{small})), &s, &fresh))
	is.Equal(reused.Positions, fresh.Positions)
	is.Equal(reused.Reply, fresh.Reply)
}

// TestTeltonikaDecodeAllocs: decoding into a reused Message allocates
// nothing, for a frame of one record as for one of ten, over TCP and UDP.
func TestTeltonikaDecodeAllocs(t *testing.T) {
	is := is.New(t)
	var recs []tkRec
	for i := range 10 {
		recs = append(recs, tkRealistic(i))
	}
	allocs := func(frame []byte, s devproto.Session) float64 {
		var m devproto.Message
		return testing.AllocsPerRun(200, func() {
			m.Reset()
			if err := (Decoder{}).Decode(frame, &s, &m); err != nil {
				t.Fatal(err)
			}
		})
	}
	one := allocs(tkFrame(tkBody(tkCodec8, recs[:1])), devproto.Session{Identifier: "x"})
	ten := allocs(tkFrame(tkBody(tkCodec8, recs)), devproto.Session{Identifier: "x"})
	is.Equal(one, ten)
	is.Equal(ten, 0.0)
	udp := allocs(tkDatagram(1, 1, "352093081452251", tkBody(tkCodec8E, recs)),
		devproto.Session{Transport: devproto.UDP, Identifier: "352093081452251"})
	is.Equal(udp, 0.0)
}

// BenchmarkTeltonikaDecode10 decodes a codec-8 frame of ten records of
// 19 I/O elements each into a reused Message. Measured on a shared 2-core
// development machine: 2.5–2.6 µs a frame at its quietest (2.6× the CRC
// of the same bytes, BenchmarkTeltonikaCRC10, 7.6× the frame of one
// record, in the same run), 10 µs median under a load average of 19
// (4.5× the CRC, 7.5× one record); 0 allocations either way
// (TestTeltonikaDecodeAllocs).
func BenchmarkTeltonikaDecode10(b *testing.B) { benchTeltonika(b, 10) }

// BenchmarkTeltonikaDecode1 is the same with one record: the cost of a
// frame rather than of its records.
func BenchmarkTeltonikaDecode1(b *testing.B) { benchTeltonika(b, 1) }

func benchTeltonika(b *testing.B, n int) {
	var recs []tkRec
	for i := range n {
		recs = append(recs, tkRealistic(i))
	}
	frame := tkFrame(tkBody(tkCodec8, recs))
	s := devproto.Session{Identifier: "356307042441013"}
	var m devproto.Message
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		m.Reset()
		if err := (Decoder{}).Decode(frame, &s, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTeltonikaVocabulary decodes a codec-8 frame of ten records
// with the full I/O set (tkFullIO: every element API.md §14 names and some
// it does not, 52 elements a record) into a reused Message, three ways in
// the same run: "vocabulary", the decoder (names and units of §14);
// "numbered", the same decoder with an empty table of names (every
// element "io" and its id): what naming costs; "before", the decoding
// before the vocabulary (Traccar's names and units, teltonika_prev_test.go).
// The figures are in docs/performance.md.
func BenchmarkTeltonikaVocabulary(b *testing.B) {
	frame := tkFullIOFrame()
	s := devproto.Session{Identifier: "356307042441013"}
	decode := func(m *devproto.Message) bool { return Decoder{}.Decode(frame, &s, m) == nil }
	for _, c := range []struct {
		name   string
		decode func(m *devproto.Message) bool
	}{
		{"vocabulary", decode},
		{"numbered", decode},
		{"before", func(m *devproto.Message) bool { return prevTkDecode(frame, m) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.name == "numbered" {
				saved := tkNames
				tkNames = [len(tkNames)]tkName{}
				defer func() { tkNames = saved }()
			}
			var m devproto.Message
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				m.Reset()
				if !c.decode(&m) || len(m.Positions) != 10 {
					b.Fatal("not decoded")
				}
			}
		})
	}
}

// BenchmarkTeltonikaVocabularyRatio is BenchmarkTeltonikaVocabulary's
// three ways interleaved, batch by batch (as BenchmarkRatio), so that
// what else runs on the machine slows them alike: it reports each one's
// time a frame and the decoder's against the two others.
func BenchmarkTeltonikaVocabularyRatio(b *testing.B) {
	frame := tkFullIOFrame()
	s := devproto.Session{Identifier: "356307042441013"}
	var m devproto.Message
	run := func(decode func() bool) time.Duration {
		const batch = 32
		t0 := time.Now()
		for range batch {
			m.Reset()
			if !decode() {
				b.Fatal("not decoded")
			}
		}
		return time.Since(t0)
	}
	vocabulary := func() bool { return Decoder{}.Decode(frame, &s, &m) == nil }
	before := func() bool { return prevTkDecode(frame, &m) }
	numbered := func() time.Duration {
		saved := tkNames
		tkNames = [len(tkNames)]tkName{}
		defer func() { tkNames = saved }()
		return run(vocabulary)
	}
	var tv, tn, tb time.Duration
	frames := 0
	for i := 0; b.Loop(); i++ {
		// In turn first, so that none is always measured after another.
		switch i % 3 {
		case 0:
			tv += run(vocabulary)
			tn += numbered()
			tb += run(before)
		case 1:
			tn += numbered()
			tb += run(before)
			tv += run(vocabulary)
		default:
			tb += run(before)
			tv += run(vocabulary)
			tn += numbered()
		}
		frames += 32
	}
	b.ReportMetric(float64(tv.Nanoseconds())/float64(frames), "vocabulary-ns")
	b.ReportMetric(float64(tn.Nanoseconds())/float64(frames), "numbered-ns")
	b.ReportMetric(float64(tb.Nanoseconds())/float64(frames), "before-ns")
	b.ReportMetric(float64(tv)/float64(tn), "vs-numbered")
	b.ReportMetric(float64(tv)/float64(tb), "vs-before")
}

// TestTeltonikaFullIOAllocs: a frame of records with the full I/O set,
// driver's key and alarm included, decodes into a reused Message without
// allocating, one record as ten.
func TestTeltonikaFullIOAllocs(t *testing.T) {
	is := is.New(t)
	var recs []tkRec
	for i := range 10 {
		recs = append(recs, tkFullIO(i))
	}
	allocs := func(frame []byte) float64 {
		var m devproto.Message
		s := devproto.Session{Identifier: "x"}
		return testing.AllocsPerRun(200, func() {
			m.Reset()
			if err := (Decoder{}).Decode(frame, &s, &m); err != nil {
				t.Fatal(err)
			}
		})
	}
	is.Equal(allocs(tkFrame(tkBody(tkCodec8, recs[:1]))), 0.0)
	is.Equal(allocs(tkFrame(tkBody(tkCodec8, recs))), 0.0)
	is.Equal(allocs(tkFrame(tkBody(tkCodec8E, recs))), 0.0)
}

// BenchmarkTeltonikaCRC10 is the CRC alone of the frame of ten records:
// the least a decoder that verifies it can cost.
func BenchmarkTeltonikaCRC10(b *testing.B) {
	var recs []tkRec
	for i := range 10 {
		recs = append(recs, tkRealistic(i))
	}
	body := tkBody(tkCodec8, recs)
	b.SetBytes(int64(len(body) + 12))
	for b.Loop() {
		devproto.CRC16ARC(body)
	}
}

// FuzzTeltonika splits and decodes arbitrary bytes as a stream (TCP) and
// as a datagram (UDP): no panic, Split's length within the buffer, only
// the errors of the contract, positions on Earth, and a reused Message
// decoding as a fresh one. With fix, a TCP frame's length and CRC are
// made right first, so that the records themselves are explored.
func FuzzTeltonika(f *testing.F) {
	for _, row := range prototest.CorpusRaw(f) {
		f.Add(row, false, false)
		f.Add(row, true, false)
		f.Add(row, false, true)
	}
	for _, raw := range prototest.TelematicsSeeds(f, "teltonika") {
		f.Add(raw, false, false)
	}
	full := tkFullIO(0)
	full.variable = []tkIOValue{{385, 0}, {548, 1}}
	full.blobs = [][]byte{tkBeaconBlob(), tkTagBlob()}
	f.Add(tkFrame(tkBody(tkCodec8E, []tkRec{full, tkFullIO(1)})), false, true)
	f.Add(tkFrame(tkBody(tkCodec8E, []tkRec{tkRealistic(0)})), false, true)
	f.Add(tkDatagram(1, 1, "352093081452251", tkBody(tkCodec16, []tkRec{tkRealistic(0)})), true, false)
	// A device's answer to a command: a codec 12 response.
	f.Add(prototest.MustHex(f, "000000000000002d0c01060000002523464d323d3236323033323736313732313339362c32363230332c30372e30322e30350d0a0100009a2e"), false, true)
	var reused devproto.Message
	f.Fuzz(func(t *testing.T, b []byte, udp, fix bool) {
		s := devproto.Session{Identifier: "356307042441013", Now: prototest.Now}
		if udp {
			s.Transport = devproto.UDP
		} else if fix && len(b) >= 12 && len(b) <= (Decoder{}).MaxFrame() {
			b = bytes.Clone(b)
			copy(b, []byte{0, 0, 0, 0})
			binary.BigEndian.PutUint32(b[4:], uint32(len(b)-12))
			binary.BigEndian.PutUint32(b[len(b)-4:], uint32(devproto.CRC16ARC(b[8:len(b)-4])))
		}
		frame := b
		if !udp {
			n, err := Decoder{}.Split(b)
			if n < 0 || n > len(b) || err != nil && err != devproto.ErrGarbage || err != nil && n != 0 {
				t.Fatalf("Split: %d, %v of %d bytes", n, err, len(b))
			}
			if n > 0 {
				frame = b[:n]
			}
		}
		prototest.FuzzDecode(t, Decoder{}, frame, s, &reused)
	})
}

// TestTeltonikaManyAlarms: a record of thousands of alarm elements among
// others (as many as a frame holds) gives one alarm attribute naming each
// alarm once (kept by its index, not searched for at each element).
func TestTeltonikaManyAlarms(t *testing.T) {
	is := is.New(t)
	r := tkRealistic(0)
	r.io = [4][]tkIOValue{}
	for i := range 20000 {
		id, v := uint16(236), uint64(1) // general
		switch i % 3 {
		case 1:
			id, v = 253, uint64(1+i%4) // acceleration, braking, cornering
		case 2:
			id, v = 150, 7 // an element without a name
		}
		r.io[0] = append(r.io[0], tkIOValue{id, v})
	}
	frame := tkFrame(tkBody(tkCodec8E, []tkRec{r}))
	is.True(len(frame) <= Decoder{}.MaxFrame())
	var m devproto.Message
	is.NoErr(Decoder{}.Decode(frame, &devproto.Session{Identifier: "x"}, &m))
	alarm, ok := prototest.AttrOf(m.Positions[0], "alarm")
	is.True(ok)
	is.Equal(alarm.Str, "general,hard_braking,hard_acceleration,hard_cornering")
	is.Equal(len(m.Positions[0].Attrs), 3+20000/3) // priority, event, alarm, the others
}

// TestTeltonikaGH3000 decodes codec 7 records: time in seconds since
// 2007, a location of float coordinates whose fields a mask selects, I/O
// groups by the global mask; a record without a location gives no
// position but counts in the acknowledgement.
func TestTeltonikaGH3000(t *testing.T) {
	is := is.New(t)
	when := time.Date(2016, 2, 3, 4, 5, 6, 0, time.UTC)
	seconds := uint32(when.Unix() - 1167609600)
	var body []byte
	body = append(body, tkCodecGH3000, 2)
	// A record with every location field, and a 1-byte I/O element.
	body = binary.BigEndian.AppendUint32(body, seconds|0x40000000) // the top bits are not time
	body = append(body, 0x03, 0x5F)                                // global: location, 1-byte I/O; location: all but the cell's
	body = binary.BigEndian.AppendUint32(body, math.Float32bits(-33.5))
	body = binary.BigEndian.AppendUint32(body, math.Float32bits(151.25))
	body = binary.BigEndian.AppendUint16(body, 42) // altitude
	body = append(body, 64, 90, 7)                 // course (×360/256), speed, satellites
	body = append(body, 23)                        // signal strength (bit 6, no cell)
	body = append(body, 1, 240, 1)                 // motion
	// A record of I/O values only.
	body = binary.BigEndian.AppendUint32(body, seconds+60)
	body = append(body, 0x04, 1, 67)
	body = binary.BigEndian.AppendUint16(body, 3950) // battery, mV
	body = append(body, 2)
	var m devproto.Message
	is.NoErr(Decoder{}.Decode(tkFrame(body), &devproto.Session{Identifier: "x"}, &m))
	is.Equal(m.Reply, []byte{0, 0, 0, 2})
	is.Equal(len(m.Positions), 1)
	p := m.Positions[0]
	is.Equal(p.Time, when)
	is.Equal(p.Latitude, -33.5)
	is.Equal(p.Longitude, 151.25)
	is.True(p.HasAltitude && p.Altitude == 42)
	is.True(p.HasHeading && p.Heading == 90)
	is.True(p.HasSpeed && p.Speed == 90)
	is.True(p.HasSatellites && p.Satellites == 7)
	is.True(p.Valid)
	rssi, _ := prototest.AttrOf(p, "rssi")
	motion, _ := prototest.AttrOf(p, "motion")
	is.Equal(rssi.Value(), 23.0)
	is.Equal(motion.Value(), true)
}

// TestTeltonikaVocabulary decodes a record with every I/O element API.md
// §14's table names (and some it does not) and finds each under its
// common name, converted to its unit — and nothing else: the others are
// numbered.
func TestTeltonikaVocabulary(t *testing.T) {
	for _, codec := range []byte{tkCodec8, tkCodec8E, tkCodec16} {
		var m devproto.Message
		if err := (Decoder{}).Decode(tkFrame(tkBody(codec, []tkRec{tkFullIO(1)})), &devproto.Session{Identifier: "x"}, &m); err != nil {
			t.Fatal(err)
		}
		got := map[string]any{}
		for _, a := range m.Positions[0].Attrs {
			if _, twice := got[a.Name()]; twice {
				t.Errorf("codec %#x: %s twice", codec, a.Name())
			}
			got[a.Name()] = a.Value()
		}
		for name, want := range tkFullIOWant {
			g, ok := got[name]
			switch w := want.(type) {
			case float64:
				if gf, isNum := g.(float64); !ok || !isNum || math.Abs(gf-w) > 1e-9 {
					t.Errorf("codec %#x: %s = %v, want %v", codec, name, g, w)
				}
			default:
				if g != want {
					t.Errorf("codec %#x: %s = %v (%T), want %v", codec, name, g, g, want)
				}
			}
		}
		for name := range got {
			if _, ok := tkFullIOWant[name]; !ok {
				t.Errorf("codec %#x: %s = %v, not wanted", codec, name, got[name])
			}
		}
	}
}

// TestTeltonikaVocabularyAlarms: each alarm element raises its word on the
// values that mean one, and nothing on the others; several join in one
// attribute.
func TestTeltonikaVocabularyAlarms(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		id    uint16
		value uint64
		want  string
	}{
		{253, 1, "hard_acceleration"}, {253, 2, "hard_braking"}, {253, 3, "hard_cornering"}, {253, 0, ""}, {253, 4, ""},
		{247, 1, "accident"}, {247, 2, "accident"}, {247, 0, ""},
		{246, 1, "tow"}, {246, 0, ""},
		{252, 1, "power_cut"}, {252, 0, ""}, {252, 2, ""},
		{249, 1, "jamming"}, {249, 0, ""},
		{255, 112, "overspeed"}, {255, 0, ""},
		{236, 1, "general"}, {236, 0, ""},
	} {
		r := tkRealistic(0)
		r.io = [4][]tkIOValue{{{c.id, c.value}}}
		var m devproto.Message
		is.NoErr(Decoder{}.Decode(tkFrame(tkBody(tkCodec8, []tkRec{r})), &devproto.Session{Identifier: "x"}, &m))
		alarm, ok := prototest.AttrOf(m.Positions[0], "alarm")
		is.Equal(ok, c.want != "") // c.id, c.value
		is.Equal(alarm.Str, c.want)
		_, numbered := prototest.AttrOf(m.Positions[0], "io"+strconv.Itoa(int(c.id)))
		is.True(!numbered) // an alarm element is never left numbered
	}
	r := tkRealistic(0)
	r.io = [4][]tkIOValue{{{252, 1}, {246, 1}, {253, 2}, {252, 1}}}
	var m devproto.Message
	is.NoErr(Decoder{}.Decode(tkFrame(tkBody(tkCodec8, []tkRec{r})), &devproto.Session{Identifier: "x"}, &m))
	alarm, _ := prototest.AttrOf(m.Positions[0], "alarm")
	is.Equal(alarm.Str, "power_cut,tow,hard_braking")
}

// TestTeltonikaVehicleCountsPrevail: the CAN bus's odometer (87) and the
// vehicle's engine worktime (102) win over the device's own counts (16,
// 103) whichever comes first, and either alone is used.
func TestTeltonikaVehicleCountsPrevail(t *testing.T) {
	is := is.New(t)
	decode := func(elements []tkIOValue) devproto.Position {
		r := tkRealistic(0)
		r.io = [4][]tkIOValue{nil, nil, elements}
		var m devproto.Message
		is.NoErr(Decoder{}.Decode(tkFrame(tkBody(tkCodec8, []tkRec{r})), &devproto.Session{Identifier: "x"}, &m))
		return m.Positions[0]
	}
	value := func(p devproto.Position, name string) any {
		n := 0
		var v any
		for _, a := range p.Attrs {
			if a.Name() == name {
				n++
				v = a.Value()
			}
		}
		is.Equal(n, 1) // once
		return v
	}
	for _, order := range [][]tkIOValue{
		{{16, 1_000}, {87, 250_000}, {103, 600}, {102, 6_000}},
		{{87, 250_000}, {16, 1_000}, {102, 6_000}, {103, 600}},
	} {
		p := decode(order)
		is.Equal(value(p, "odometer_km"), 250.0)
		is.Equal(value(p, "engine_hours"), 100.0)
	}
	p := decode([]tkIOValue{{16, 1_500}, {103, 90}})
	is.Equal(value(p, "odometer_km"), 1.5)
	is.Equal(value(p, "engine_hours"), 1.5)
}

// TestTeltonikaDriverAndTemperatures: an iButton of 0 is no driver; a
// temperature's status codes (sensor not ready, not found...) stay
// numbered; negative temperatures and coolant are signed.
func TestTeltonikaDriverAndTemperatures(t *testing.T) {
	is := is.New(t)
	r := tkRealistic(0)
	r.io = [4][]tkIOValue{
		{{32, 0xF6}},
		nil,
		{{72, uint64(uint32(0xFFFFFE0C))}, {73, 4000}, {74, 1250}, {75, 1251}},
		{{78, 0}},
	}
	var m devproto.Message
	is.NoErr(Decoder{}.Decode(tkFrame(tkBody(tkCodec8, []tkRec{r})), &devproto.Session{Identifier: "x"}, &m))
	p := m.Positions[0]
	_, ok := prototest.AttrOf(p, "driver_identifier")
	is.True(!ok)
	_, ok = prototest.AttrOf(p, "io78")
	is.True(!ok)
	for name, want := range map[string]any{"coolant_temp_c": -10.0, "temp1_c": -50.0, "io73": 4000.0, "temp3_c": 125.0, "io75": 1251.0} {
		a, ok := prototest.AttrOf(p, name)
		is.True(ok) // name
		is.Equal(a.Value(), want)
	}
}

// TestTeltonikaDriverStringIsKept: the iButton's text is made once for a
// connection that keeps sending the same key, and anew for another key.
func TestTeltonikaDriverStringIsKept(t *testing.T) {
	is := is.New(t)
	frame := func(key uint64) []byte {
		r := tkRealistic(0)
		r.io = [4][]tkIOValue{nil, nil, nil, {{78, key}}}
		return tkFrame(tkBody(tkCodec8, []tkRec{r, r}))
	}
	var m devproto.Message
	s := devproto.Session{Identifier: "x"}
	same := frame(0x0102030405060708)
	is.NoErr(Decoder{}.Decode(same, &s, &m))
	a, _ := prototest.AttrOf(m.Positions[0], "driver_identifier")
	is.Equal(a.Str, "0807060504030201")
	allocs := testing.AllocsPerRun(50, func() {
		m.Reset()
		if err := (Decoder{}).Decode(same, &s, &m); err != nil {
			t.Fatal(err)
		}
	})
	is.Equal(allocs, 0.0)
	m.Reset()
	is.NoErr(Decoder{}.Decode(frame(0xFF), &s, &m))
	a, _ = prototest.AttrOf(m.Positions[1], "driver_identifier")
	is.Equal(a.Str, "FF00000000000000")
}

// TestTelematicsRows decodes every row of testdata/telematics.jsonl and
// compares the attributes of the position it names with the row's
// (prototest.CheckTelematicsRows).
func TestTelematicsRows(t *testing.T) {
	prototest.CheckTelematicsRows(t, "teltonika", func(t *testing.T, row prototest.TelematicsRow) (string, []devproto.Message) {
		return prototest.DecodeTelematics(t, Decoder{}, row)
	})
}

// TestEveryAttributeIsOneTheAPIAccepts decodes everything the tests hold —
// the corpus, Traccar's captures, the telematics rows
// (prototest.EveryAttribute), and records of every codec with every
// element the decoder names — and checks every attribute the decoder
// produced. The fuzz target checks the same of arbitrary input.
func TestEveryAttributeIsOneTheAPIAccepts(t *testing.T) {
	names := prototest.EveryAttribute(t, Decoder{})
	// Records with every element Teltonika's table names, and beacons
	// and tags, in each codec.
	for _, codec := range []byte{tkCodec8, tkCodec8E, tkCodec16} {
		recs := []tkRec{tkFullIO(0), tkFullIO(1), tkRealistic(2)}
		if codec == tkCodec8E {
			recs[2].variable = []tkIOValue{{256, 0}, {385, 1}, {548, 2}, {9999, 3}}
			recs[2].blobs = [][]byte{[]byte("WVWZZZ1JZXW000001"), tkBeaconBlob(), tkTagBlob(), make([]byte, 40)}
		}
		var m devproto.Message
		if err := (Decoder{}).Decode(tkFrame(tkBody(codec, recs)), &devproto.Session{Identifier: "x"}, &m); err != nil {
			t.Fatal(err)
		}
		names.Add(t, &m)
	}
	names.Want(t, "alarm", "battery_level", "beacon1_uuid", "din1", "dout1", "driver_identifier", "engine_hours", "event", "hdop", "ignition", "io241", "odometer_km", "power_v", "tag1_rssi")
}
