package prototest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// AttrNames checks that every attribute of the messages handed to Add is
// one the API accepts (CheckAttrsSound) and remembers their names, so that
// a test can ask which names its decoder produced.
type AttrNames map[string]bool

// Add checks m's attributes and notes their names.
func (n AttrNames) Add(t testing.TB, m *devproto.Message) {
	t.Helper()
	CheckAttrsSound(t, m)
	for _, p := range m.Positions {
		for _, a := range p.Attrs {
			n[a.Name()] = true
		}
	}
}

// Want fails for each name of want no message had.
func (n AttrNames) Want(t testing.TB, want ...string) {
	t.Helper()
	for _, w := range want {
		if !n[w] {
			t.Errorf("the decoder produced no %s", w)
		}
	}
}

// EveryAttribute decodes with proto everything a stream protocol's tests
// hold — its corpus as a stream after the connection's login (and each
// UDP row alone as a datagram), Traccar's captures (testdata/traccar.txt)
// where it has them, its telematics rows — and checks every attribute of
// every message (AttrNames.Add).
func EveryAttribute(t *testing.T, proto devproto.Decoder) AttrNames {
	t.Helper()
	names := AttrNames{}
	for _, row := range LoadCorpus(t) {
		raw := row.Raw(t)
		s := devproto.Session{Identifier: LoginIMEI, Now: Now}
		if row.Transport == "udp" {
			s.Transport = devproto.UDP
			var m devproto.Message
			if proto.Decode(raw, &s, &m) == nil {
				names.Add(t, &m)
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
				names.Add(t, &m)
			}
			rest = rest[n:]
		}
	}
	b, err := os.ReadFile(filepath.Join("testdata", "traccar.txt"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || strings.HasPrefix(line, "#") || f[2] != "ok" {
			continue
		}
		raw := MustHex(t, f[3])
		s := devproto.Session{Identifier: LoginIMEI, Now: Now}
		frames := [][]byte{raw}
		if f[1] == "udp" {
			s.Transport = devproto.UDP
		} else {
			frames = SplitAll(t, proto, raw)
		}
		for _, frame := range frames {
			var m devproto.Message
			if proto.Decode(frame, &s, &m) == nil {
				names.Add(t, &m)
			}
		}
	}
	for _, row := range LoadTelematics(t) {
		_, msgs := DecodeTelematics(t, proto, row)
		for i := range msgs {
			names.Add(t, &msgs[i])
		}
	}
	return names
}
