package queclink

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
)

var glSession = devproto.Session{Identifier: "860599000773978", Now: prototest.Now}

// glEncodeCases follow Traccar's Gl200ProtocolEncoder
// (github.com/traccar/traccar, Apache-2.0), its FFFF the command's serial
// number here.
func glEncodeCases() []prototest.EncodeCase {
	return []prototest.EncodeCase{
		{Name: "engine_stop", Cmd: devproto.Command{Type: devproto.CmdEngineStop, Seq: 1},
			Want: []byte("AT+GTOUT=gl300,1,,,0,0,0,0,0,0,0,,,,,,,0001$")},
		{Name: "engine_resume", Cmd: devproto.Command{Type: devproto.CmdEngineResume, Seq: 0x2A},
			Want: []byte("AT+GTOUT=gl300,0,,,0,0,0,0,0,0,0,,,,,,,002A$")},
		{Name: "engine_stop with a password", Cmd: devproto.Command{Type: devproto.CmdEngineStop, Password: "gv300", Seq: 0x1FFFF},
			Want: []byte("AT+GTOUT=gv300,1,,,0,0,0,0,0,0,0,,,,,,,FFFF$")},
		{Name: "position_request", Cmd: devproto.Command{Type: devproto.CmdPositionRequest, Seq: 3},
			Want: []byte("AT+GTRTO=gl300,1,,,,,,0003$")},
		{Name: "reboot", Cmd: devproto.Command{Type: devproto.CmdReboot, Seq: 0xABCD},
			Want: []byte("AT+GTRTO=gl300,3,,,,,,ABCD$")},
		{Name: "custom", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "AT+GTRTO=gl300,8,,,,,,FFFF$"},
			Want: []byte("AT+GTRTO=gl300,8,,,,,,FFFF$")},
	}
}

func TestQueclinkEncode(t *testing.T) {
	prototest.CheckEncoder(t, Encoder{}, glSession, glEncodeCases(), []prototest.BadCommand{
		{Name: "password with a comma", Cmd: devproto.Command{Type: devproto.CmdReboot, Password: "gl,300"}, Field: "password"},
		{Name: "not an AT command", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "GTRTO=gl300$"}, Field: "text"},
		{Name: "two commands", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "AT+GTRTO=gl300,1,,,,,,FFFF$AT+GTRTO=gl300,3,,,,,,FFFF$"}, Field: "text"},
		{Name: "no $", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "AT+GTRTO=gl300,1,,,,,,FFFF"}, Field: "text"},
		{Name: "hex", Cmd: devproto.Command{Type: devproto.CmdCustom, Hex: []byte("AT")}, Field: "hex"},
		{Name: "too long", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "AT+GT" + strings.Repeat("A", MaxCommand) + "$"}, Field: "text"},
	})
}

// TestQueclinkAnswers decodes devices' +ACK answers (Traccar's
// Gl200TextProtocolDecoderTest, Apache-2.0): the result is the answer's
// type and values, ResultSeq its serial number; the heartbeat's is none.
func TestQueclinkAnswers(t *testing.T) {
	for _, c := range []struct {
		sentence, result string
		seq              uint32
	}{
		{"+ACK:GTRTO,1A0800,860599000773978,GL300,VER,FFFF,20161006053520,0C19$", "+ACK:GTRTO,VER", 0xFFFF},
		{"+ACK:GTJDC,0A0102,135790246811220,,0016,20090214093254,11F0$", "+ACK:GTJDC", 0x16},
		{"+ACK:GTGEO,1A0102,135790246811220,,0,0008,20100310172830,11F0$", "+ACK:GTGEO,0", 8},
		{"+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$", "", 0},
	} {
		is := is.New(t)
		var m devproto.Message
		is.NoErr(Decoder{}.Decode([]byte(c.sentence), &devproto.Session{Now: prototest.Now}, &m))
		is.Equal(m.HasResult, c.result != "")
		is.Equal(m.CommandResult, c.result)
		is.Equal(m.ResultSeq, c.seq)
	}
}

// glATCommand is the device's framing of a command: AT+GT, then no $
// before the one that ends it.
func glATCommand(b []byte) error {
	if !glCommand(string(b)) {
		return errors.New("not one AT+GT command")
	}
	return nil
}

func FuzzQueclinkEncode(f *testing.F) {
	prototest.FuzzEncoder(f, Encoder{}, glSession, glEncodeCases(), glATCommand)
}

func BenchmarkQueclinkEncode(b *testing.B) {
	prototest.BenchmarkEncode(b, Encoder{}, devproto.Command{Type: devproto.CmdEngineStop, Seq: 1}, glSession)
}
