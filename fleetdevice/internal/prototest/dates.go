package prototest

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/matryer/is"
)

// DateCase is a frame of a protocol that sends its date and time as
// fields, with the time it names, and variants of it whose date or time
// cannot exist.
type DateCase struct {
	Name  string
	Frame string
	Want  time.Time // the frame as sent
	Bad   []Variant // each made impossible
	Hex   bool      // Frame is hexadecimal
}

// Variant replaces its first string with its second in a frame.
type Variant [2]string

// CheckImpossibleDates decodes each case's frame with proto, as sent (one
// valid position at Want) and with each variant (one position without a
// fix, at no time: never rolled over into another time).
func CheckImpossibleDates(t *testing.T, proto devproto.Decoder, cases []DateCase) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			is := is.New(t)
			frames := []string{c.Frame}
			for _, b := range c.Bad {
				is.True(strings.Contains(c.Frame, b[0])) // the variant changes the frame
				frames = append(frames, strings.Replace(c.Frame, b[0], b[1], 1))
			}
			for i, f := range frames {
				raw := []byte(f)
				if c.Hex {
					var err error
					raw, err = hex.DecodeString(f)
					is.NoErr(err)
				}
				var m devproto.Message
				s := devproto.Session{Transport: devproto.TCP, Identifier: "1", Now: Now}
				is.NoErr(proto.Decode(raw, &s, &m))
				CheckDecoded(t, m)
				if m.Kind != devproto.KindPositions || len(m.Positions) != 1 {
					t.Fatalf("%q: kind %v, %d positions; want one position", f, m.Kind, len(m.Positions))
				}
				p := m.Positions[0]
				if i == 0 {
					is.True(p.Valid)
					is.Equal(p.Time, c.Want)
					continue
				}
				if p.Valid || !p.Time.IsZero() {
					t.Errorf("%q: valid %v at %v; want no fix, at no time", f, p.Valid, p.Time)
				}
			}
		})
	}
}
