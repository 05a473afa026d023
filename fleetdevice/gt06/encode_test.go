package gt06

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
)

// gtEncodeCases are the 0x80 frames of each command type. "custom
// Relay,1#" is Traccar's Gt06ProtocolEncoderTest (github.com/traccar/traccar,
// Apache-2.0: its engine stop, server flag and serial 0); the others are
// built by the same rule, their CRCs computed apart from this package.
func gtEncodeCases(t testing.TB) []prototest.EncodeCase {
	h := func(s string) []byte { return prototest.MustHex(t, s) }
	return []prototest.EncodeCase{
		{Name: "engine_stop", Cmd: devproto.Command{Type: devproto.CmdEngineStop, Seq: 1},
			Want: h("787815800f000000014459442c30303030303023000189a70d0a")},
		{Name: "engine_resume", Cmd: devproto.Command{Type: devproto.CmdEngineResume, Seq: 2},
			Want: h("787816801000000002484659442c303030303030230002c24a0d0a")},
		{Name: "engine_stop with a password", Cmd: devproto.Command{Type: devproto.CmdEngineStop, Password: "123456", Seq: 0x10203},
			Want: h("787815800f000102034459442c313233343536230203e90b0d0a")},
		{Name: "custom Relay,1#", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "Relay,1#"},
			Want: h("787812800c0000000052656c61792c312300009dee0d0a")},
		{Name: "custom WHERE#", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "WHERE#", Seq: 3},
			Want: h("787810800a00000003574845524523000380770d0a")},
	}
}

func TestGT06Encode(t *testing.T) {
	prototest.CheckEncoder(t, Encoder{}, devproto.Session{Identifier: "123456789012345"}, gtEncodeCases(t),
		[]prototest.BadCommand{
			{Name: "password with a comma", Cmd: devproto.Command{Type: devproto.CmdEngineStop, Password: "1,2"}, Field: "password"},
			{Name: "empty", Cmd: devproto.Command{Type: devproto.CmdCustom}, Field: "text"},
			{Name: "hex", Cmd: devproto.Command{Type: devproto.CmdCustom, Hex: []byte{1}}, Field: "hex"},
			{Name: "line end", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "WHERE#\r\n"}, Field: "text"},
			{Name: "too long", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: strings.Repeat("A", MaxCommand+1)}, Field: "text"},
		})
}

// TestGT06Answers decodes devices' answers to commands (Traccar's
// Gt06ProtocolDecoderTest, Apache-2.0): 0x15 with the server flag it
// echoes (its text NUL-padded on some), 0x21 in ASCII or UTF-16, a
// "Current position!" answer both a position and the result; an ICCID
// report is no answer.
func TestGT06Answers(t *testing.T) {
	for _, c := range []struct {
		frame, result string
		has           bool
		kind          devproto.Kind
	}{
		{"78782d152500000000437574206f666620746865206675656c20737570706c793a2053756363657373210002013b898a0d0a",
			"Cut off the fuel supply: Success!", true, devproto.KindOther},
		{"7878661500000000004459443d537563636573732100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000010009e82b0d0a",
			"DYD=Success!", true, devproto.KindOther},
		{"797900262100000000020043006f006d006d0061006e00640020006500720072006f0072002100236e850d0a",
			"Command error!", true, devproto.KindOther},
		{"7979007121000000000143757272656e7420706f736974696f6e214c61743a4e35342e3733393333322c4c6f6e3a4532352e3237333237302c436f757273653a3132362e35332c53706565643a302e303030302c4461746554696d653a323031372d30352d3236202031303a32373a3437000bbee30d0a",
			"Current position!Lat:N54.739332,Lon:E25.273270,Course:126.53,Speed:0.0000,DateTime:2017-05-26  10:27:47", true, devproto.KindPositions},
		{"7878281520000000003c49434349443a38393838323339303030303039373330323635303e00020d446f260d0a", "", false, devproto.KindOther},
	} {
		is := is.New(t)
		frame := prototest.MustHex(t, c.frame)
		var m devproto.Message
		is.NoErr(Decoder{}.Decode(frame, &devproto.Session{Identifier: "1"}, &m))
		is.Equal(m.Kind, c.kind)
		is.Equal(m.HasResult, c.has)
		is.Equal(m.CommandResult, c.result)
		is.Equal(m.ResultSeq, uint32(0)) // Traccar's server flag, 0
		if c.kind == devproto.KindPositions {
			is.Equal(len(m.Positions), 1)
			is.Equal(m.Positions[0].Latitude, 54.739332)
			is.Equal(m.Positions[0].Longitude, 25.27327)
		}
	}
	// The flag echoed is the command's Seq.
	is := is.New(t)
	frame := prototest.MustHex(t, "78782d152500000000437574206f666620746865206675656c20737570706c793a2053756363657373210002013b898a0d0a")
	copy(frame[5:9], []byte{0, 0, 0, 42})
	crc := devproto.CRC16X25(frame[2 : len(frame)-4])
	frame[len(frame)-4], frame[len(frame)-3] = byte(crc>>8), byte(crc)
	var m devproto.Message
	is.NoErr(Decoder{}.Decode(frame, &devproto.Session{Identifier: "1"}, &m))
	is.Equal(m.ResultSeq, uint32(42))
	is.Equal(len(m.Reply) > 0, true) // 0x15 is acknowledged, as Traccar does
}

func FuzzGT06Encode(f *testing.F) {
	prototest.FuzzEncoder(f, Encoder{}, devproto.Session{Identifier: "123456789012345"}, gtEncodeCases(f), prototest.DecodesWhole(Decoder{}))
}

func BenchmarkGT06Encode(b *testing.B) {
	prototest.BenchmarkEncode(b, Encoder{}, devproto.Command{Type: devproto.CmdEngineStop, Seq: 1}, devproto.Session{Identifier: "123456789012345"})
}
