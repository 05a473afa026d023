package h02

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
)

// h02Session is Traccar's H02ProtocolEncoderTest's: device
// 123456789012345, at 01:02:03.
var h02Session = devproto.Session{Identifier: "123456789012345", Now: time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC)}

// h02EncodeCases: engine stop, resume and the interval are Traccar's
// H02ProtocolEncoderTest (github.com/traccar/traccar, Apache-2.0).
func h02EncodeCases() []prototest.EncodeCase {
	return []prototest.EncodeCase{
		{Name: "engine_stop", Cmd: devproto.Command{Type: devproto.CmdEngineStop},
			Want: []byte("*HQ,123456789012345,S20,010203,1,1#")},
		{Name: "engine_resume", Cmd: devproto.Command{Type: devproto.CmdEngineResume},
			Want: []byte("*HQ,123456789012345,S20,010203,1,0#")},
		{Name: "set_interval", Cmd: devproto.Command{Type: devproto.CmdSetInterval, Seconds: 10},
			Want: []byte("*HQ,123456789012345,S71,010203,22,10#")},
		{Name: "custom", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "*HQ,123456789012345,SCF,010203,0,0#"},
			Want: []byte("*HQ,123456789012345,SCF,010203,0,0#")},
	}
}

func TestH02Encode(t *testing.T) {
	prototest.CheckEncoder(t, Encoder{}, h02Session, h02EncodeCases(), []prototest.BadCommand{
		{Name: "interval 0", Cmd: devproto.Command{Type: devproto.CmdSetInterval}, Field: "seconds"},
		{Name: "interval over a day", Cmd: devproto.Command{Type: devproto.CmdSetInterval, Seconds: 86401}, Field: "seconds"},
		{Name: "not a sentence", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "S20,1,1"}, Field: "text"},
		{Name: "two sentences", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "*HQ,1,R1#*HQ,1,R1#"}, Field: "text"},
		{Name: "hex", Cmd: devproto.Command{Type: devproto.CmdCustom, Hex: []byte("*#")}, Field: "hex"},
		{Name: "line end", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "*HQ,1,R1#\r\n"}, Field: "text"},
		{Name: "too long", Cmd: devproto.Command{Type: devproto.CmdCustom, Text: "*" + strings.Repeat("A", MaxCommand) + "#"}, Field: "text"},
	})
	is := is.New(t)
	_, err := Encoder{}.Encode(nil, devproto.Command{Type: devproto.CmdEngineStop}, &devproto.Session{})
	is.Equal(err, devproto.ErrNoIdentifier)
}

// TestH02Answers decodes devices' V4 answers (Traccar's
// H02ProtocolDecoderTest, Apache-2.0), which carry a position too.
func TestH02Answers(t *testing.T) {
	for _, c := range []struct{ sentence, result string }{
		{"*TH,2020916012,V4,S20,DONE,130305,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,F7FFFBFF#", "S20,DONE"},
		{"*TH,2020916012,V4,S20,ERROR,130305,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,FFFFFBFF#", "S20,ERROR"},
		{"*TH,2020916012,V4,S1,OK,pass_word,130305,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,FFFFFBFD#", "S1,OK,pass_word"},
	} {
		is := is.New(t)
		var m devproto.Message
		is.NoErr(Decoder{}.Decode([]byte(c.sentence), &devproto.Session{Now: h02Session.Now}, &m))
		is.True(m.HasResult)
		is.Equal(m.CommandResult, c.result)
		is.Equal(m.ResultSeq, uint32(0))
	}
	var m devproto.Message
	is.New(t).NoErr(Decoder{}.Decode([]byte("*HQ,4970105243,V1,104000,A,2235.1777,N,11357.8913,E,000.27,235,130721,FFFFFBFF#"), &devproto.Session{Now: h02Session.Now}, &m))
	is.New(t).True(!m.HasResult) // a report answers nothing
}

func FuzzH02Encode(f *testing.F) {
	prototest.FuzzEncoder(f, Encoder{}, h02Session, h02EncodeCases(), prototest.DecodesWhole(Decoder{}))
}

func BenchmarkH02Encode(b *testing.B) {
	prototest.BenchmarkEncode(b, Encoder{}, devproto.Command{Type: devproto.CmdEngineStop}, h02Session)
}
