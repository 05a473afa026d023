package prototest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/matryer/is"
)

// Helpers of the text protocols' tests (H02, Queclink, GPS103, OsmAnd).

// RawRows reads testdata/corpus.jsonl as plain JSON objects, in the order
// LoadCorpus gives its rows, for the members Row does not hold
// (msg_type, hdop, status_hex...).
func RawRows(t testing.TB) []map[string]any {
	name := filepath.Join("testdata", "corpus.jsonl")
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// RawPoints is a raw row's expected points.
func RawPoints(r map[string]any) []map[string]any {
	e, _ := r["expect"].(map[string]any)
	ps, _ := e["points"].([]any)
	var out []map[string]any
	for _, p := range ps {
		m, _ := p.(map[string]any)
		out = append(out, m)
	}
	return out
}

// CorpusSeeds is every row's bytes of a stream protocol's corpus, for a
// fuzz target's seeds (LoadCorpus needs a *testing.T).
func CorpusSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, r := range RawRows(f) {
		if h, ok := r["raw_hex"].(string); ok && h != "" {
			b, err := hex.DecodeString(h)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, b)
		} else if s, ok := r["raw_text"].(string); ok {
			seeds = append(seeds, []byte(s))
		}
	}
	if len(seeds) == 0 {
		f.Fatal("testdata/corpus.jsonl: no seeds")
	}
	return seeds
}

// CheckIdentifier compares a message's identifier with the row's imei,
// where the row states one (null: none in the frame).
func CheckIdentifier(t *testing.T, row Row, m devproto.Message) {
	t.Helper()
	if !row.Expect.Has["imei"] {
		return
	}
	want := ""
	if row.Expect.IMEI != nil {
		want = *row.Expect.IMEI
	}
	if m.Identifier != want {
		t.Errorf("%s: identifier %q, want %q", row.Source, m.Identifier, want)
	}
}

// CheckKind compares a message's kind with the row's: its kind member
// where it has one, else positions when it expects points.
func CheckKind(t *testing.T, row Row, m devproto.Message) {
	t.Helper()
	want := devproto.KindOther
	switch row.Expect.Kind {
	case "handshake", "login":
		want = devproto.KindLogin
	case "heartbeat":
		want = devproto.KindHeartbeat
	case "":
		if len(row.Expect.Points) > 0 {
			want = devproto.KindPositions
		}
	default:
		t.Fatalf("%s: kind %q unknown to the test", row.Source, row.Expect.Kind)
	}
	if m.Kind != want {
		t.Errorf("%s: kind %v, want %v", row.Source, m.Kind, want)
	}
}

// Attr is the attribute name of p, ok false when p has none.
func Attr(p devproto.Position, name string) (any, bool) {
	for _, a := range p.Attrs {
		if a.Name() == name {
			return a.Value(), true
		}
	}
	return nil, false
}

// CheckAttrs compares the attributes a row's point states with p's.
func CheckAttrs(t *testing.T, source string, want map[string]any, p devproto.Position) {
	t.Helper()
	for k, w := range want {
		g, ok := Attr(p, k)
		if !ok {
			t.Errorf("%s: no attribute %s, want %v", source, k, w)
			continue
		}
		if gf, ok := g.(float64); ok {
			if wf, ok := w.(float64); !ok || math.Abs(gf-wf) > 1e-9 {
				t.Errorf("%s: attribute %s = %v, want %v", source, k, g, w)
			}
			continue
		}
		if g != w {
			t.Errorf("%s: attribute %s = %v (%T), want %v (%T)", source, k, g, g, w, w)
		}
	}
}

// SplitStream runs a listener's loop over data fed in chunks of the given
// sizes (the last repeated): after each read, Split until it asks for
// more. It returns the frames, trimmed of their line ends, and the bytes
// left.
func SplitStream(t *testing.T, p devproto.Decoder, data []byte, chunk func() int) ([]string, []byte) {
	t.Helper()
	var frames []string
	var buf []byte
	for len(data) > 0 {
		n := min(chunk(), len(data))
		buf = append(buf, data[:n]...)
		data = data[n:]
		for {
			k, err := p.Split(buf)
			if err != nil {
				t.Fatalf("Split(%q): %v", buf, err)
			}
			if k < 0 || k > len(buf) {
				t.Fatalf("Split(%q) = %d, beyond the buffer", buf, k)
			}
			if k == 0 {
				break
			}
			frames = append(frames, string(bytes.Trim(buf[:k], "\r\n")))
			buf = buf[k:]
		}
	}
	return frames, buf
}

// CheckStream joins frames with line ends or nothing between them, and
// checks that Split finds them again whether the stream arrives whole,
// one byte at a time, or in random chunks.
func CheckStream(t *testing.T, p devproto.Decoder, frames [][]byte) {
	t.Helper()
	is := is.New(t)
	var data []byte
	want := make([]string, len(frames))
	for i, f := range frames {
		data = append(data, f...)
		data = append(data, [...]string{"", "\r\n", "\n", "\r\n\r\n"}[i%4]...)
		want[i] = string(bytes.Trim(f, "\r\n"))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name  string
		chunk func() int
	}{
		{"whole", func() int { return len(data) }},
		{"bytewise", func() int { return 1 }},
		{"random", func() int { return 1 + rng.IntN(40) }},
		{"random big", func() int { return 1 + rng.IntN(400) }},
	} {
		got, left := SplitStream(t, p, data, c.chunk)
		if len(got) != len(want) {
			t.Fatalf("%s: %d frames, want %d: %q", c.name, len(got), len(want), got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: frame %d %q, want %q", c.name, i, got[i], want[i])
			}
		}
		is.Equal(len(bytes.Trim(left, "\r\n")), 0) // nothing but line ends left
	}
}

// CheckGarbage checks that Split refuses buf.
func CheckGarbage(t *testing.T, p devproto.Decoder, buf []byte) {
	t.Helper()
	if _, err := p.Split(buf); !errors.Is(err, devproto.ErrGarbage) {
		t.Errorf("Split(%q): %v, want ErrGarbage", buf, err)
	}
}

// CheckDecoded checks what any decoded message must be: positions in range
// with finite values and times JSON can write, attributes the API accepts
// (CheckAttrsSound), and an identifier that could be one.
func CheckDecoded(t *testing.T, m devproto.Message) {
	t.Helper()
	CheckAttrsSound(t, &m)
	if m.Identifier != "" && !devproto.IdentifierOK(m.Identifier) {
		t.Fatalf("identifier %q", m.Identifier)
	}
	for _, p := range m.Positions {
		if !devproto.Usable(&p) {
			t.Fatalf("position %+v out of range", p)
		}
		if _, err := p.Time.MarshalJSON(); err != nil {
			t.Fatalf("time %v: %v", p.Time, err)
		}
		for _, a := range p.Attrs {
			if _, err := json.Marshal(a.Value()); err != nil {
				t.Fatalf("attribute %s: %v", a.Name(), err)
			}
		}
	}
	if len(m.Positions) > 0 && m.Kind != devproto.KindPositions {
		t.Fatalf("kind %v with %d positions", m.Kind, len(m.Positions))
	}
}

// FuzzStream checks a stream protocol on arbitrary bytes: Split stays
// within the buffer and asks for more only below its bounds, and Decode,
// of what Split finds and of the bytes as one datagram, never panics and
// gives only sound messages.
func FuzzStream(t *testing.T, p devproto.Decoder, data []byte) {
	n, err := p.Split(data)
	if n < 0 || n > len(data) {
		t.Fatalf("Split = %d of %d bytes", n, len(data))
	}
	if err == nil && n == 0 && len(data) >= 2*p.MaxFrame() {
		t.Fatalf("Split asks for more past %d bytes", len(data))
	}
	if err != nil && n != 0 {
		t.Fatalf("Split = %d with %v", n, err)
	}
	decode := func(frame []byte) {
		var m devproto.Message
		s := devproto.Session{Transport: devproto.UDP, Now: Now}
		if err := p.Decode(frame, &s, &m); err != nil {
			if !errors.Is(err, devproto.ErrGarbage) && !errors.Is(err, devproto.ErrChecksum) {
				t.Fatalf("Decode: %v", err)
			}
			return
		}
		CheckDecoded(t, m)
	}
	if n > 0 {
		decode(data[:n])
	}
	decode(data)
}

// FuzzProtocol runs FuzzStream on a stream protocol, seeded from every row
// of its corpus and from extra frames.
func FuzzProtocol(f *testing.F, p devproto.Decoder, extra ...[]byte) {
	for _, seed := range CorpusSeeds(f) {
		f.Add(seed)
	}
	for _, seed := range extra {
		f.Add(seed)
	}
	for _, seed := range TelematicsSeeds(f, p.Name()) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		FuzzStream(t, p, data)
	})
}

// CheckRow compares a decoded message with a corpus row: identifier,
// kind, positions and reply.
func CheckRow(t *testing.T, row Row, m devproto.Message) {
	t.Helper()
	CheckIdentifier(t, row, m)
	CheckKind(t, row, m)
	CheckPositions(t, row, m.Positions)
	CheckReply(t, row, m.Reply)
}

// TextBaseline is what any text decoder does at least: the frame made a
// string, cut at its commas. The benchmarks' ratios are to it.
func TextBaseline(frame []byte) int {
	var buf [64]string
	return len(devproto.JavaSplit(buf[:0], string(frame), ','))
}

// BenchmarkDecode measures decoding frame, allocations included.
func BenchmarkDecode(b *testing.B, p devproto.Decoder, frame []byte) {
	b.ReportAllocs()
	decode := DecodeFunc(b, p, frame)
	for b.Loop() {
		decode()
	}
}

// DecodeFunc is a function that decodes frame into a message it reuses.
func DecodeFunc(b *testing.B, p devproto.Decoder, frame []byte) func() {
	var m devproto.Message
	s := devproto.Session{Transport: devproto.TCP, Now: Now}
	return func() {
		m.Reset()
		if err := p.Decode(frame, &s, &m); err != nil || m.Kind != devproto.KindPositions {
			b.Fatalf("%v %v", err, m.Kind)
		}
	}
}

// BenchmarkRatio measures f against baseline in the same loop, batch by
// batch, so that what else runs on the machine slows both alike; it
// reports each one's time per call and their ratio.
func BenchmarkRatio(b *testing.B, f, baseline func()) {
	const batch = 32
	var tf, tb time.Duration
	calls := 0
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			f()
		}
		t1 := time.Now()
		for range batch {
			baseline()
		}
		tf += t1.Sub(t0)
		tb += time.Since(t1)
		calls += batch
	}
	b.ReportMetric(float64(tf.Nanoseconds())/float64(calls), "decode-ns")
	b.ReportMetric(float64(tb.Nanoseconds())/float64(calls), "baseline-ns")
	b.ReportMetric(float64(tf)/float64(tb), "ratio")
}

// BenchmarkTextRatio measures decoding frame against TextBaseline.
func BenchmarkTextRatio(b *testing.B, p devproto.Decoder, frame []byte) {
	n := 0
	BenchmarkRatio(b, DecodeFunc(b, p, frame), func() { n += TextBaseline(frame) })
	if n == 0 {
		b.Fatal("no fields")
	}
}
