package prototest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// EncodeCase is a command and the bytes its protocol's encoder must make
// of it, byte for byte (Want: the bytes, as MustHex or []byte(text) makes
// them).
type EncodeCase struct {
	Name string
	Cmd  devproto.Command
	Want []byte
}

// BadCommand is a command an encoder refuses with a *CommandError naming
// Field.
type BadCommand struct {
	Name  string
	Cmd   devproto.Command
	Field string
}

// commandOrder is API.md §16's order of the command types.
var commandOrder = []string{devproto.CmdEngineStop, devproto.CmdEngineResume, devproto.CmdPositionRequest,
	devproto.CmdSetInterval, devproto.CmdOutput, devproto.CmdReboot, devproto.CmdCustom}

// CheckEncoder checks enc against the cases: each encodes byte for byte,
// appended after what dst holds and without allocating into a dst large
// enough; every type Commands lists has a case, in API.md §16's order; a
// type it does not list is ErrCommandUnsupported, dst unchanged; each bad
// command is a *CommandError naming its field.
func CheckEncoder(t *testing.T, enc devproto.Encoder, s devproto.Session, cases []EncodeCase, bad []BadCommand) {
	t.Helper()
	types := enc.Commands()
	last := -1
	for _, typ := range types {
		i := slices.Index(commandOrder, typ)
		if i <= last {
			t.Errorf("Commands() = %v: not API.md §16's types in its order", types)
		}
		last = i
		if !slices.ContainsFunc(cases, func(c EncodeCase) bool { return c.Cmd.Type == typ }) {
			t.Errorf("no case encodes %s", typ)
		}
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ss := s
			got, err := enc.Encode(nil, c.Cmd, &ss)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(got, c.Want) {
				t.Fatalf("Encode:\n got % x\n%q\nwant % x\n%q", got, got, c.Want, c.Want)
			}
			prefix := []byte("kept")
			got, err = enc.Encode(prefix, c.Cmd, &ss)
			if err != nil || !bytes.Equal(got[:4], prefix) || !bytes.Equal(got[4:], c.Want) {
				t.Fatalf("Encode after a prefix: %q, %v", got, err)
			}
			dst := make([]byte, 0, 4096)
			if n := testing.AllocsPerRun(20, func() { dst, _ = enc.Encode(dst[:0], c.Cmd, &ss) }); n != 0 {
				t.Fatalf("Encode into a reused dst: %v allocations", n)
			}
		})
	}
	for _, typ := range commandOrder {
		if slices.Contains(types, typ) {
			continue
		}
		ss := s
		got, err := enc.Encode([]byte("kept"), devproto.Command{Type: typ, Seconds: 60, Index: 1, Text: "x"}, &ss)
		if err != devproto.ErrCommandUnsupported || string(got) != "kept" {
			t.Errorf("Encode(%s) = %q, %v; want ErrCommandUnsupported", typ, got, err)
		}
	}
	for _, b := range bad {
		ss := s
		got, err := enc.Encode([]byte("kept"), b.Cmd, &ss)
		var ce *devproto.CommandError
		if !errors.As(err, &ce) || ce.Field != b.Field || string(got) != "kept" {
			t.Errorf("%s: Encode = %q, %v; want a CommandError on %s", b.Name, got, err, b.Field)
		}
	}
}

// FuzzEncoder is the body of a protocol's fuzz target of its encoder:
// the cases' commands as seeds, and each command FuzzEncode checks.
func FuzzEncoder(f *testing.F, enc devproto.Encoder, s devproto.Session, cases []EncodeCase, accept func([]byte) error) {
	for _, c := range cases {
		f.Add(c.Cmd.Type, c.Cmd.Seconds, c.Cmd.Index, c.Cmd.On, c.Cmd.Text, c.Cmd.Hex, c.Cmd.Seq)
	}
	f.Add("custom", 0, 0, false, "a\x00b", []byte(nil), uint32(0))
	f.Add("set_interval", -1, -1, true, "", []byte{0xFF}, ^uint32(0))
	f.Fuzz(func(t *testing.T, typ string, seconds, index int, on bool, text string, hex []byte, seq uint32) {
		c := devproto.Command{Type: typ, Seconds: seconds, Index: index, On: on, Text: text, Hex: hex, Seq: seq}
		FuzzEncode(t, enc, s, c, accept)
	})
}

// BenchmarkEncode encodes c into a reused dst, against a baseline in the
// same run: appending the same bytes, ready made, to a reused buffer (what
// writing a command costs at the least). The two are interleaved batch by
// batch and reported as encode-ns, append-ns and their ratio; allocs/op
// counts both (0).
func BenchmarkEncode(b *testing.B, enc devproto.Encoder, c devproto.Command, s devproto.Session) {
	want, err := enc.Encode(nil, c, &s)
	if err != nil {
		b.Fatal(err)
	}
	dst, base := make([]byte, 0, 1024), make([]byte, 0, 1024)
	const batch = 256
	var encoding, appending time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			dst, _ = enc.Encode(dst[:0], c, &s)
		}
		t1 := time.Now()
		for range batch {
			base = append(base[:0], want...)
		}
		encoding += t1.Sub(t0)
		appending += time.Since(t1)
	}
	n := float64(b.N) * batch
	b.ReportMetric(float64(encoding.Nanoseconds())/n, "encode-ns")
	b.ReportMetric(float64(appending.Nanoseconds())/n, "append-ns")
	b.ReportMetric(float64(encoding)/float64(appending), "ratio")
	if !bytes.Equal(dst, want) || !bytes.Equal(base, want) {
		b.Fatal("the bytes changed")
	}
}

// DecodesWhole is an accept of FuzzEncode for a protocol whose device
// frames as the server does: dec.Split finds one frame of all of b, which
// dec.Decode takes.
func DecodesWhole(dec devproto.Decoder) func([]byte) error {
	return func(b []byte) error {
		if err := SplitsWhole(dec)(b); err != nil {
			return err
		}
		var m devproto.Message
		return dec.Decode(b, &devproto.Session{Identifier: "1"}, &m)
	}
}

// FuzzEncode encodes the command: no panic, only ErrCommandUnsupported,
// ErrNoIdentifier or a *CommandError with dst unchanged, and on success bytes that accept
// (the protocol's own framing) takes whole.
func FuzzEncode(t *testing.T, enc devproto.Encoder, s devproto.Session, c devproto.Command, accept func([]byte) error) {
	t.Helper()
	got, err := enc.Encode([]byte("kept"), c, &s)
	if !bytes.HasPrefix(got, []byte("kept")) {
		t.Fatalf("Encode lost dst: %q", got)
	}
	if err != nil {
		var ce *devproto.CommandError
		if err != devproto.ErrCommandUnsupported && err != devproto.ErrNoIdentifier && !errors.As(err, &ce) {
			t.Fatalf("Encode: %v", err)
		}
		if len(got) != 4 {
			t.Fatalf("Encode failed (%v) but appended %q", err, got[4:])
		}
		return
	}
	if len(got) == 4 {
		t.Fatal("Encode appended nothing")
	}
	if err := accept(got[4:]); err != nil {
		t.Fatalf("the protocol's framing refuses % x (%q): %v", got[4:], got[4:], err)
	}
}

// SplitsWhole is an accept of FuzzEncode for a protocol whose device
// frames as the server does: dec.Split finds one frame of all of b.
func SplitsWhole(dec devproto.Decoder) func([]byte) error {
	return func(b []byte) error {
		n, err := dec.Split(b)
		if err != nil {
			return err
		}
		if n != len(b) {
			return errors.New("not one whole frame")
		}
		return nil
	}
}
