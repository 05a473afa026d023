package osmand

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
)

var encodeSession = devproto.Session{Transport: devproto.HTTP, Identifier: "123456", Now: prototest.Now}

func osmandEncodeCases() []prototest.EncodeCase {
	return []prototest.EncodeCase{
		{Name: "custom", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "interval=30"}, Want: []byte("interval=30")},
	}
}

func TestOsmAndEncode(t *testing.T) {
	prototest.CheckEncoder(t, Encoder{}, encodeSession, osmandEncodeCases(), []prototest.BadCommand{
		{Name: "empty", Cmd: devproto.Command{Type: devproto.CmdCustom}, Field: "text"},
		{Name: "hex", Cmd: devproto.Command{Type: devproto.CmdCustom, Hex: []byte{0}}, Field: "hex"},
		{Name: "line end", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "a\nb"}, Field: "text"},
		{Name: "too long", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: strings.Repeat("a", MaxCommand+1)}, Field: "text"},
	})
}

// printableBody: an answer's body is printable ASCII.
func printableBody(b []byte) error {
	for _, c := range b {
		if c < 0x20 || c > 0x7E {
			return errors.New("not printable ASCII")
		}
	}
	return nil
}

func FuzzOsmAndEncode(f *testing.F) {
	prototest.FuzzEncoder(f, Encoder{}, encodeSession, osmandEncodeCases(), printableBody)
}

func BenchmarkOsmAndEncode(b *testing.B) {
	prototest.BenchmarkEncode(b, Encoder{}, devproto.Command{Type: devproto.CmdCustom, Text: "interval=30"}, encodeSession)
}
