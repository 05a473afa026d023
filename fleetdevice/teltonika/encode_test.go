package teltonika

import (
	"testing"

	"github.com/matryer/is"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
)

// tkEncodeCases are the frames of each command type. The two custom ones
// are Traccar's TeltonikaProtocolEncoderTest (github.com/traccar/traccar,
// Apache-2.0); the others are built by the same rule (codec 12, type 5,
// CRC-16/IBM), their CRCs computed apart from this package.
func tkEncodeCases(t testing.TB) []prototest.EncodeCase {
	h := func(s string) []byte { return prototest.MustHex(t, s) }
	return []prototest.EncodeCase{
		{Name: "engine_stop", Cmd: devproto.Command{Type: devproto.CmdEngineStop},
			Want: h("00000000000000130c01050000000b7365746469676f7574203101000087a2")},
		{Name: "engine_resume", Cmd: devproto.Command{Type: devproto.CmdEngineResume},
			Want: h("00000000000000130c01050000000b7365746469676f7574203001000017a3")},
		{Name: "position_request", Cmd: devproto.Command{Type: devproto.CmdPositionRequest},
			Want: h("000000000000000e0c010500000006676574677073010000ccd7")},
		{Name: "output 1 off", Cmd: devproto.Command{Type: devproto.CmdOutput, Index: 1},
			Want: h("00000000000000130c01050000000b7365746469676f7574203001000017a3")},
		{Name: "output 2 on", Cmd: devproto.Command{Type: devproto.CmdOutput, Index: 2, On: true},
			Want: h("00000000000000140c01050000000c7365746469676f7574203f310100007db4")},
		{Name: "output 4 on", Cmd: devproto.Command{Type: devproto.CmdOutput, Index: 4, On: true},
			Want: h("00000000000000160c01050000000e7365746469676f7574203f3f3f310100003481")},
		{Name: "reboot", Cmd: devproto.Command{Type: devproto.CmdReboot},
			Want: h("00000000000000100c01050000000863707572657365740100007a75")},
		{Name: "custom text", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "setdigout 11"},
			Want: h("00000000000000140c01050000000c7365746469676f7574203131010000bed5")},
		{Name: "custom hex", Cmd: devproto.Command{Type: devproto.CmdCustom, Hex: h("03030000000185E8")},
			Want: h("00000000000000100c01050000000803030000000185e8010000da8b")},
	}
}

func TestTeltonikaEncode(t *testing.T) {
	long := make([]byte, MaxCommand+1)
	for i := range long {
		long[i] = 'a'
	}
	prototest.CheckEncoder(t, Encoder{}, devproto.Session{Identifier: "356307042441013"}, tkEncodeCases(t),
		[]prototest.BadCommand{
			{Name: "output 0", Cmd: devproto.Command{Type: devproto.CmdOutput}, Field: "index"},
			{Name: "output 5", Cmd: devproto.Command{Type: devproto.CmdOutput, Index: 5}, Field: "index"},
			{Name: "empty", Cmd: devproto.Command{Type: devproto.CmdCustom}, Field: "text"},
			{Name: "control byte", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "getgps\r\n"}, Field: "text"},
			{Name: "too long", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: string(long)}, Field: "text"},
			{Name: "too long hex", Cmd: devproto.Command{Type: devproto.CmdCustom, Hex: long}, Field: "hex"},
		})
}

func TestTeltonikaEncodeNotOverUDP(t *testing.T) {
	is := is.New(t)
	_, err := Encoder{}.Encode(nil, devproto.Command{Type: devproto.CmdEngineStop}, &devproto.Session{Transport: devproto.UDP})
	is.Equal(err, devproto.ErrCommandUnsupported)
}

// TestTeltonikaAnswers decodes devices' codec 12 responses (Traccar's
// TeltonikaProtocolDecoderTest, Apache-2.0): a text is the result, bytes
// that are not text are their hex; a command frame (type 5) is none.
func TestTeltonikaAnswers(t *testing.T) {
	for _, c := range []struct {
		frame, result string
		has           bool
	}{
		{"000000000000002d0c01060000002523464d323d3236323033323736313732313339362c32363230332c30372e30322e30350d0a0100009a2e",
			"#FM2=262032761721396,26203,07.02.05", true},
		{"00000000000000100C010600000008010300010015D5C5010000D988", "010300010015d5c5", true},
		{"00000000000000140c01050000000c7365746469676f7574203131010000bed5", "", false},
	} {
		is := is.New(t)
		frame := prototest.MustHex(t, c.frame)
		n, err := Decoder{}.Split(frame)
		is.NoErr(err)
		is.Equal(n, len(frame))
		var m devproto.Message
		is.NoErr(Decoder{}.Decode(frame, &devproto.Session{Identifier: "1"}, &m))
		is.Equal(m.Kind, devproto.KindOther)
		is.Equal(m.HasResult, c.has)
		is.Equal(m.CommandResult, c.result)
		is.Equal(m.ResultSeq, uint32(0))
		is.Equal(len(m.Reply), 0) // a response is not acknowledged
	}
}

func FuzzTeltonikaEncode(f *testing.F) {
	prototest.FuzzEncoder(f, Encoder{}, devproto.Session{Identifier: "356307042441013"}, tkEncodeCases(f), prototest.DecodesWhole(Decoder{}))
}

func BenchmarkTeltonikaEncode(b *testing.B) {
	prototest.BenchmarkEncode(b, Encoder{}, devproto.Command{Type: devproto.CmdCustom, Text: "setdigout 11"}, devproto.Session{Identifier: "356307042441013"})
}
