package gps103

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
)

var gps103Session = devproto.Session{Identifier: "123456789012345", Now: prototest.Now}

// gps103EncodeCases: the interval (300 s: 05m) and custom (H,080) are
// Traccar's Gps103ProtocolEncoderTest (github.com/traccar/traccar,
// Apache-2.0), with the `;` that ends a sentence.
func gps103EncodeCases() []prototest.EncodeCase {
	return []prototest.EncodeCase{
		{Name: "engine_stop", Cmd: devproto.Command{Type: devproto.CmdEngineStop}, Want: []byte("**,imei:123456789012345,J;")},
		{Name: "engine_resume", Cmd: devproto.Command{Type: devproto.CmdEngineResume}, Want: []byte("**,imei:123456789012345,K;")},
		{Name: "position_request", Cmd: devproto.Command{Type: devproto.CmdPositionRequest}, Want: []byte("**,imei:123456789012345,B;")},
		{Name: "set_interval 300", Cmd: devproto.Command{Type: devproto.CmdSetInterval, Seconds: 300}, Want: []byte("**,imei:123456789012345,C,05m;")},
		{Name: "set_interval 10", Cmd: devproto.Command{Type: devproto.CmdSetInterval, Seconds: 10}, Want: []byte("**,imei:123456789012345,C,10s;")},
		{Name: "set_interval 2h", Cmd: devproto.Command{Type: devproto.CmdSetInterval, Seconds: 7200}, Want: []byte("**,imei:123456789012345,C,02h;")},
		{Name: "custom", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "H,080"}, Want: []byte("**,imei:123456789012345,H,080;")},
	}
}

func TestGPS103Encode(t *testing.T) {
	prototest.CheckEncoder(t, Encoder{}, gps103Session, gps103EncodeCases(), []prototest.BadCommand{
		{Name: "interval 0", Cmd: devproto.Command{Type: devproto.CmdSetInterval}, Field: "seconds"},
		{Name: "interval 90 s", Cmd: devproto.Command{Type: devproto.CmdSetInterval, Seconds: 90}, Field: "seconds"},
		{Name: "interval 100 h", Cmd: devproto.Command{Type: devproto.CmdSetInterval, Seconds: 100 * 3600}, Field: "seconds"},
		{Name: "semicolon", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "B;**,imei:1,J"}, Field: "text"},
		{Name: "hex", Cmd: devproto.Command{Type: devproto.CmdCustom, Hex: []byte("B")}, Field: "hex"},
		{Name: "too long", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: strings.Repeat("A", MaxCommand+1)}, Field: "text"},
	})
	is := is.New(t)
	_, err := Encoder{}.Encode(nil, devproto.Command{Type: devproto.CmdEngineStop}, &devproto.Session{Identifier: "1,2"})
	is.Equal(err, devproto.ErrNoIdentifier)
}

// TestGPS103Answers: a report whose keyword is a command's letter and
// "t" acknowledges it (the form of Coban's protocol description: the
// tracker's report, its keyword jt after J); "tracker" does not.
func TestGPS103Answers(t *testing.T) {
	for _, c := range []struct{ sentence, result string }{
		{"imei:359710045559474,jt,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;", "jt"},
		{"imei:359710045559474,kt,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;", "kt"},
		{"imei:359710045559474,tracker,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;", ""},
	} {
		is := is.New(t)
		var m devproto.Message
		is.NoErr(Decoder{}.Decode([]byte(c.sentence), &devproto.Session{Now: prototest.Now}, &m))
		is.Equal(m.HasResult, c.result != "")
		is.Equal(m.CommandResult, c.result)
		is.Equal(len(m.Positions), 1) // the report's position still
	}
}

// gps103Command is the device's framing of a command: `**,imei:`, then
// no `;` before the one that ends it.
func gps103Command(b []byte) error {
	if !strings.HasPrefix(string(b), "**,imei:") || strings.IndexByte(string(b), ';') != len(b)-1 {
		return errors.New("not one **,imei: sentence")
	}
	return nil
}

func FuzzGPS103Encode(f *testing.F) {
	prototest.FuzzEncoder(f, Encoder{}, gps103Session, gps103EncodeCases(), gps103Command)
}

func BenchmarkGPS103Encode(b *testing.B) {
	prototest.BenchmarkEncode(b, Encoder{}, devproto.Command{Type: devproto.CmdEngineStop}, gps103Session)
}
