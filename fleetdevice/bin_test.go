package fleetdevice

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// loadRowsAs reads the rows of testdata/corpus/name again as T, for what
// a protocol's rows state beyond the shared row type, in the order
// loadCorpus gives them.
func loadRowsAs[T any](t *testing.T, name string) []T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
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

// TestCRCTables derives the CRC tables from their polynomials again, and
// checks each CRC's standard check value (the CRC of "123456789").
func TestCRCTables(t *testing.T) {
	for _, c := range []struct {
		name  string
		table string
		poly  uint16
		crc   func([]byte) uint16
		check uint16
	}{
		{"ARC", crcARCTable, 0xA001, crcARC, 0xBB3D},
		{"X-25", crcX25Table, 0x8408, crcX25, 0x906E},
	} {
		if len(c.table) != 512 {
			t.Fatalf("%s: table of %d bytes", c.name, len(c.table))
		}
		for i := 0; i < 256; i++ {
			v := uint16(i)
			for range 8 {
				if v&1 != 0 {
					v = v>>1 ^ c.poly
				} else {
					v >>= 1
				}
			}
			if got := uint16(c.table[2*i])<<8 | uint16(c.table[2*i+1]); got != v {
				t.Errorf("%s: entry %d is %#04x, want %#04x", c.name, i, got, v)
			}
		}
		if got := c.crc([]byte("123456789")); got != c.check {
			t.Errorf("%s(123456789) = %#04x, want %#04x", c.name, got, c.check)
		}
	}
}

// captureCheck is a value Traccar's own test asserts of a capture: an
// attribute of its position (or "altitude", the position's).
type captureCheck struct {
	line int
	name string
	want any
}

// testCaptures runs the captures of testdata/traccar/file through proto
// as a listener would: each label's behaviour (see the file's header),
// every position on Earth, and the values checks assert.
func testCaptures(t *testing.T, proto Protocol, file string, checks []captureCheck) {
	b, err := os.ReadFile(filepath.Join("testdata", "traccar", file))
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
			t.Fatalf("%s: bad line %q", file, line)
		}
		at, _ := strconv.Atoi(f[0])
		raw, err := hex.DecodeString(f[3])
		if err != nil {
			t.Fatalf("%s:%d: %v", file, at, err)
		}
		t.Run(f[0], func(t *testing.T) {
			s := Session{Identifier: corpusLoginIMEI, Now: corpusNow}
			if f[1] == "udp" {
				s.Transport = UDP
			}
			var positions []Position
			switch label := f[2]; label {
			case "ok":
				frames := [][]byte{raw}
				if s.Transport == TCP {
					frames = splitAll(t, proto, raw)
				}
				for _, frame := range frames {
					var m Message
					if err := proto.Decode(frame, &s, &m); err != nil {
						t.Fatalf("frame %x: %v", frame, err)
					}
					positions = append(positions, m.Positions...)
				}
			case "checksum":
				if n, err := proto.Split(raw); err != nil || n != len(raw) {
					t.Fatalf("Split: %d, %v; want %d", n, err, len(raw))
				}
				var m Message
				if err := proto.Decode(raw, &s, &m); err != ErrChecksum {
					t.Fatalf("Decode: %v, want ErrChecksum", err)
				}
			case "partial":
				if n, err := proto.Split(raw); n != 0 || err != nil {
					t.Fatalf("Split: %d, %v; want 0, nil", n, err)
				}
			case "garbage":
				if _, err := proto.Split(raw); err != ErrGarbage {
					t.Fatalf("Split: %v, want ErrGarbage", err)
				}
			default:
				t.Fatalf("label %q", label)
			}
			for _, p := range positions {
				if !binOnEarth(p.Latitude, p.Longitude) {
					t.Errorf("position off Earth: %v, %v", p.Latitude, p.Longitude)
				}
			}
			for _, c := range checks {
				if c.line != at {
					continue
				}
				seen[at] = true
				if !hasValue(positions, c.name, c.want) {
					t.Errorf("no position with %s = %v", c.name, c.want)
				}
			}
		})
	}
	for _, c := range checks {
		if !seen[c.line] {
			t.Errorf("%s: no capture at line %d", file, c.line)
		}
	}
}

// hasValue reports whether a position has the attribute (or altitude)
// with the value.
func hasValue(positions []Position, name string, want any) bool {
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

// splitAll cuts a stream into the frames Split finds, failing unless they
// make up the whole of it.
func splitAll(t *testing.T, proto Protocol, stream []byte) [][]byte {
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
