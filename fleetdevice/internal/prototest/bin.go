package prototest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// LoadRows reads the rows of testdata/corpus.jsonl again as T, for what
// a protocol's rows state beyond the shared row type, in the order
// LoadCorpus gives them.
func LoadRows[T any](t *testing.T) []T {
	t.Helper()
	return LoadRowsTB[T](t)
}

func LoadRowsTB[T any](t testing.TB) []T {
	name := filepath.Join("testdata", "corpus.jsonl")
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var rows []T
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r T
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// CaptureCheck is a value Traccar's own test asserts of a capture: an
// attribute of its position (or "altitude", the position's).
type CaptureCheck struct {
	Line int
	Name string
	Want any
}

// RunCaptures runs the captures of testdata/traccar.txt through proto
// as a listener would: each label's behaviour (see the file's header),
// every position on Earth, and the values checks assert.
func RunCaptures(t *testing.T, proto devproto.Decoder, checks []CaptureCheck) {
	b, err := os.ReadFile(filepath.Join("testdata", "traccar.txt"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("traccar.txt: bad line %q", line)
		}
		at, _ := strconv.Atoi(f[0])
		raw, err := hex.DecodeString(f[3])
		if err != nil {
			t.Fatalf("traccar.txt:%d: %v", at, err)
		}
		t.Run(f[0], func(t *testing.T) {
			s := devproto.Session{Identifier: LoginIMEI, Now: Now}
			if f[1] == "udp" {
				s.Transport = devproto.UDP
			}
			var positions []devproto.Position
			switch label := f[2]; label {
			case "ok":
				frames := [][]byte{raw}
				if s.Transport == devproto.TCP {
					frames = SplitAll(t, proto, raw)
				}
				for _, frame := range frames {
					var m devproto.Message
					if err := proto.Decode(frame, &s, &m); err != nil {
						t.Fatalf("frame %x: %v", frame, err)
					}
					positions = append(positions, m.Positions...)
				}
			case "checksum":
				if n, err := proto.Split(raw); err != nil || n != len(raw) {
					t.Fatalf("Split: %d, %v; want %d", n, err, len(raw))
				}
				var m devproto.Message
				if err := proto.Decode(raw, &s, &m); err != devproto.ErrChecksum {
					t.Fatalf("Decode: %v, want ErrChecksum", err)
				}
			case "partial":
				if n, err := proto.Split(raw); n != 0 || err != nil {
					t.Fatalf("Split: %d, %v; want 0, nil", n, err)
				}
			case "garbage":
				if _, err := proto.Split(raw); err != devproto.ErrGarbage {
					t.Fatalf("Split: %v, want ErrGarbage", err)
				}
			default:
				t.Fatalf("label %q", label)
			}
			for _, p := range positions {
				if !devproto.OnEarth(p.Latitude, p.Longitude) {
					t.Errorf("position off Earth: %v, %v", p.Latitude, p.Longitude)
				}
			}
			for _, c := range checks {
				if c.Line != at {
					continue
				}
				seen[at] = true
				if !HasValue(positions, c.Name, c.Want) {
					t.Errorf("no position with %s = %v", c.Name, c.Want)
				}
			}
		})
	}
	for _, c := range checks {
		if !seen[c.Line] {
			t.Errorf("traccar.txt: no capture at line %d", c.Line)
		}
	}
}

// HasValue reports whether a position has the attribute (or altitude)
// with the value.
func HasValue(positions []devproto.Position, name string, want any) bool {
	for _, p := range positions {
		if name == "altitude" {
			if p.HasAltitude && p.Altitude == want {
				return true
			}
			continue
		}
		for _, a := range p.Attrs {
			if a.Name() == name && a.Value() == want {
				return true
			}
		}
	}
	return false
}

// SplitAll cuts a stream into the frames Split finds, failing unless they
// make up the whole of it.
func SplitAll(t *testing.T, proto devproto.Decoder, stream []byte) [][]byte {
	t.Helper()
	var frames [][]byte
	for len(stream) > 0 {
		n, err := proto.Split(stream)
		if err != nil || n <= 0 || n > len(stream) {
			t.Fatalf("Split(%x): %d, %v", stream, n, err)
		}
		frames = append(frames, stream[:n])
		stream = stream[n:]
	}
	return frames
}

// SplitChunks feeds a stream to Split the way a listener does, in the
// given chunks, and returns the frames it finds.
func SplitChunks(proto devproto.Decoder, chunks [][]byte) ([][]byte, error) {
	var frames [][]byte
	var pending []byte
	for _, c := range chunks {
		pending = append(pending, c...)
		for {
			n, err := proto.Split(pending)
			if err != nil {
				return frames, err
			}
			if n < 0 || n > len(pending) {
				return frames, fmt.Errorf("the decoder's Split: %d of %d bytes", n, len(pending))
			}
			if n == 0 {
				break
			}
			frames = append(frames, bytes.Clone(pending[:n]))
			pending = pending[n:]
		}
	}
	if len(pending) != 0 {
		return frames, fmt.Errorf("%d bytes left: %x", len(pending), pending)
	}
	return frames, nil
}

// CheckSplitStream checks that the frames, sent as one stream, come out of
// Split the same whether the stream arrives whole, a byte at a time, or in
// random chunks.
func CheckSplitStream(t *testing.T, proto devproto.Decoder, frames [][]byte) {
	t.Helper()
	stream := bytes.Join(frames, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for name, chunks := range map[string][][]byte{
		"whole":   {stream},
		"bytes":   Chunked(stream, func() int { return 1 }),
		"random":  Chunked(stream, func() int { return 1 + rng.IntN(40) }),
		"random2": Chunked(stream, func() int { return 1 + rng.IntN(400) }),
	} {
		got, err := SplitChunks(proto, chunks)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(frames) {
			t.Fatalf("%s: %d frames, want %d", name, len(got), len(frames))
		}
		for i := range got {
			if !bytes.Equal(got[i], frames[i]) {
				t.Fatalf("%s: frame %d is %x, want %x", name, i, got[i], frames[i])
			}
		}
	}
}

// Chunked cuts b into chunks of the sizes next returns.
func Chunked(b []byte, next func() int) [][]byte {
	var chunks [][]byte
	for len(b) > 0 {
		n := min(next(), len(b))
		chunks = append(chunks, b[:n])
		b = b[n:]
	}
	return chunks
}

// CheckMessage checks what every decoded message must be: positions
// only in a message of positions, each with finite coordinates on Earth,
// and attributes the API accepts (CheckAttrsSound).
func CheckMessage(t *testing.T, m *devproto.Message) {
	t.Helper()
	CheckAttrsSound(t, m)
	if m.Kind != devproto.KindPositions && len(m.Positions) != 0 {
		t.Fatalf("%d positions in a message of kind %v", len(m.Positions), m.Kind)
	}
	for _, p := range m.Positions {
		if !devproto.Finite(p.Latitude) || !devproto.Finite(p.Longitude) || !devproto.OnEarth(p.Latitude, p.Longitude) {
			t.Fatalf("position off Earth: %v, %v", p.Latitude, p.Longitude)
		}
		for _, v := range []float64{p.Speed, p.Heading, p.Altitude} {
			if !devproto.Finite(v) {
				t.Fatalf("a value not finite: %+v", p)
			}
		}
	}
}

// CorpusRaw is the bytes of every row of testdata/corpus.jsonl, for the
// fuzz targets' seeds.
func CorpusRaw(tb testing.TB) [][]byte {
	tb.Helper()
	rows := LoadRowsTB[struct {
		RawHex string `json:"raw_hex"`
	}](tb)
	var raws [][]byte
	for _, r := range rows {
		b, err := hex.DecodeString(r.RawHex)
		if err != nil {
			tb.Fatal(err)
		}
		raws = append(raws, b)
	}
	return raws
}

// FuzzDecode decodes frame into a fresh Message and into a reused one:
// no panic, only the contract's errors, a message that CheckMessage
// accepts, and the same result both ways.
func FuzzDecode(t *testing.T, proto devproto.Decoder, frame []byte, s devproto.Session, reused *devproto.Message) {
	t.Helper()
	s1, s2 := s, s
	var fresh devproto.Message
	err := proto.Decode(frame, &s1, &fresh)
	if err != nil && err != devproto.ErrGarbage && err != devproto.ErrChecksum {
		t.Fatalf("Decode: %v", err)
	}
	if err == nil {
		CheckMessage(t, &fresh)
	}
	reused.Reset()
	if err2 := proto.Decode(frame, &s2, reused); err2 != err {
		t.Fatalf("Decode into a reused Message: %v, fresh: %v", err2, err)
	}
	if err != nil {
		return
	}
	if s1 != s2 || fresh.Kind != reused.Kind || fresh.Identifier != reused.Identifier ||
		fresh.HasResult != reused.HasResult || fresh.CommandResult != reused.CommandResult || fresh.ResultSeq != reused.ResultSeq ||
		!bytes.Equal(fresh.Reply, reused.Reply) || !SamePositions(fresh.Positions, reused.Positions) {
		t.Fatalf("a reused Message decodes otherwise:\n%+v\n%+v", reused, fresh)
	}
}

// SamePositions compares positions, an empty list of attributes equal to
// none.
func SamePositions(a, b []devproto.Position) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if len(x.Attrs) != len(y.Attrs) {
			return false
		}
		for j := range x.Attrs {
			if x.Attrs[j] != y.Attrs[j] {
				return false
			}
		}
		x.Attrs, y.Attrs = nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// LoginIMEI is the identifier a connection's login named, for the
// corpus's data frames that do not carry one.
const LoginIMEI = "123456789012345"

// AttrOf finds an attribute by name.
func AttrOf(p devproto.Position, name string) (devproto.Attribute, bool) {
	for _, a := range p.Attrs {
		if a.Name() == name {
			return a, true
		}
	}
	return devproto.Attribute{}, false
}

// MustHex decodes hexadecimal.
func MustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
