package queclink

import (
	"strings"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Encoder encodes commands as the @Track AT commands of Traccar's
// Gl200ProtocolEncoder, `AT+GTxxx=<password>,...,<serial>$`, the serial
// number the low 16 bits of the command's Seq in 4 hex digits (where
// Traccar writes FFFF), which the device echoes in its `+ACK:GTxxx`:
//
//	engine_stop       AT+GTOUT=<password>,1,,,0,0,0,0,0,0,0,,,,,,,<serial>$
//	engine_resume     AT+GTOUT=<password>,0,,,0,0,0,0,0,0,0,,,,,,,<serial>$
//	position_request  AT+GTRTO=<password>,1,,,,,,<serial>$
//	reboot            AT+GTRTO=<password>,3,,,,,,<serial>$
//	custom            the text: one whole command, `AT+GT` to its only `$`
//
// The password is the Command's, by default gl300 (a GL300's factory
// password; other models' is their own name: gv300...). The zero value
// is ready.
type Encoder struct{}

// MaxCommand bounds a custom command's text.
const MaxCommand = 400

// glDefaultPassword is the password of a command without one.
const glDefaultPassword = "gl300"

// Commands lists the command types queclink carries.
func (Encoder) Commands() []string {
	return []string{devproto.CmdEngineStop, devproto.CmdEngineResume, devproto.CmdPositionRequest,
		devproto.CmdReboot, devproto.CmdCustom}
}

// Encode appends c's AT command to dst.
func (Encoder) Encode(dst []byte, c devproto.Command, _ *devproto.Session) ([]byte, error) {
	var verb, param string
	switch c.Type {
	case devproto.CmdEngineStop:
		verb, param = "AT+GTOUT=", ",1,,,0,0,0,0,0,0,0,,,,,,,"
	case devproto.CmdEngineResume:
		verb, param = "AT+GTOUT=", ",0,,,0,0,0,0,0,0,0,,,,,,,"
	case devproto.CmdPositionRequest:
		verb, param = "AT+GTRTO=", ",1,,,,,,"
	case devproto.CmdReboot:
		verb, param = "AT+GTRTO=", ",3,,,,,,"
	case devproto.CmdCustom:
		if err := devproto.CheckText(c, MaxCommand, "", false); err != nil {
			return dst, err
		}
		if !glCommand(c.Text) {
			return dst, &devproto.CommandError{Field: "text", Message: "must be one AT+GT command, ended by its only $"}
		}
		return append(dst, c.Text...), nil
	default:
		return dst, devproto.ErrCommandUnsupported
	}
	pw, err := devproto.CheckPassword(c, glDefaultPassword)
	if err != nil {
		return dst, err
	}
	dst = append(dst, verb...)
	dst = append(dst, pw...)
	dst = append(dst, param...)
	seq := uint16(c.Seq)
	dst = devproto.AppendHexUpper(dst, []byte{byte(seq >> 8), byte(seq)})
	return append(dst, '$'), nil
}

// glCommand reports whether text is one AT command: `AT+GT`, then no `$`
// before the one that ends it.
func glCommand(text string) bool {
	return strings.HasPrefix(text, "AT+GT") && strings.IndexByte(text, '$') == len(text)-1
}

// glCommandAck reads the answer to a command, `+ACK:GTxxx,<version>,
// <imei>,<device name>,[values,]<serial>,<send time>,<count>`: its result
// is the answer's type and values (Traccar keeps the type), its
// ResultSeq the serial echoed.
func glCommandAck(v []string, m *devproto.Message) {
	if len(v) < 7 {
		return
	}
	serial := v[len(v)-3]
	seq, ok := glHex16(serial)
	if !ok {
		return
	}
	result := v[0]
	if vals := v[4 : len(v)-3]; len(vals) > 0 {
		result += "," + strings.Join(vals, ",")
	}
	m.CommandResult, m.HasResult, m.ResultSeq = result, true, seq
}

// glHex16 reads 4 hex digits.
func glHex16(s string) (uint32, bool) {
	if len(s) != 4 {
		return 0, false
	}
	var v uint32
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint32(c-'A'+10)
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
