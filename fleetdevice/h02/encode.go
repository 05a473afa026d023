package h02

import (
	"strconv"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Encoder encodes commands as the sentences of Traccar's
// H02ProtocolEncoder, `*HQ,<id>,<command>,<hhmmss>,<parameters>#`, the
// time the server's clock in UTC (Session.Now):
//
//	engine_stop    *HQ,<id>,S20,<hhmmss>,1,1#   (cut the oil and power)
//	engine_resume  *HQ,<id>,S20,<hhmmss>,1,0#
//	set_interval   *HQ,<id>,S71,<hhmmss>,22,<seconds>#
//	custom         the text: one whole sentence, `*` to `#`
//
// The device answers with a V4 sentence that names the command and its
// outcome (`*HQ,<id>,V4,S20,DONE,...#`), which the Decoder returns as
// the result; H02 echoes no sequence number. The zero value is ready.
type Encoder struct{}

// MaxCommand bounds a custom command's text.
const MaxCommand = 240

// The interval S71 sets, in seconds.
const (
	h02MinInterval = 1
	h02MaxInterval = 86400
)

// Commands lists the command types h02 carries.
func (Encoder) Commands() []string {
	return []string{devproto.CmdEngineStop, devproto.CmdEngineResume, devproto.CmdSetInterval, devproto.CmdCustom}
}

// Encode appends c's sentence to dst.
func (Encoder) Encode(dst []byte, c devproto.Command, s *devproto.Session) ([]byte, error) {
	var verb, param string
	switch c.Type {
	case devproto.CmdEngineStop:
		verb, param = "S20", "1,1"
	case devproto.CmdEngineResume:
		verb, param = "S20", "1,0"
	case devproto.CmdSetInterval:
		if err := devproto.CheckSeconds(c, h02MinInterval, h02MaxInterval); err != nil {
			return dst, err
		}
		verb, param = "S71", "22,"
	case devproto.CmdCustom:
		if err := devproto.CheckText(c, MaxCommand, "", false); err != nil {
			return dst, err
		}
		if !h02Sentence(c.Text) {
			return dst, &devproto.CommandError{Field: "text", Message: "must be one sentence, from * to its only #"}
		}
		return append(dst, c.Text...), nil
	default:
		return dst, devproto.ErrCommandUnsupported
	}
	id, err := devproto.SessionIdentifier(s)
	if err != nil {
		return dst, err
	}
	dst = append(dst, "*HQ,"...)
	dst = append(dst, id...)
	dst = append(dst, ',')
	dst = append(dst, verb...)
	dst = append(dst, ',')
	dst = devproto.AppendClock(dst, s.Now.UTC())
	dst = append(dst, ',')
	dst = append(dst, param...)
	if c.Type == devproto.CmdSetInterval {
		dst = strconv.AppendInt(dst, int64(c.Seconds), 10)
	}
	return append(dst, '#'), nil
}

// h02Sentence reports whether text is one sentence: `*`, then anything
// but `*` and `#`, then `#`.
func h02Sentence(text string) bool {
	if len(text) < 2 || text[0] != '*' || text[len(text)-1] != '#' {
		return false
	}
	for i := 1; i < len(text)-1; i++ {
		if text[i] == '*' || text[i] == '#' {
			return false
		}
	}
	return true
}
