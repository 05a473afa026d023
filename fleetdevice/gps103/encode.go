package gps103

import (
	"strconv"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Encoder encodes commands as the sentences of Traccar's
// Gps103ProtocolEncoder, `**,imei:<id>,<command>`, ended with `;` as
// Coban's protocol description writes them:
//
//	engine_stop       **,imei:<id>,J;     (cut the oil and power)
//	engine_resume     **,imei:<id>,K;
//	position_request  **,imei:<id>,B;     (one report now)
//	set_interval      **,imei:<id>,C,<n><s|m|h>;  (10s, 05m, 01h)
//	custom            **,imei:<id>,<text>;
//
// The device acknowledges J and K with a report whose keyword is the
// command's letter and `t` (`jt`, `kt`), which the Decoder returns as the
// result; B and C are answered by their effect (reports), and the command
// stays sent. GPS103 echoes no sequence number. The zero value is ready.
type Encoder struct{}

// MaxCommand bounds a custom command's text.
const MaxCommand = 200

// Commands lists the command types gps103 carries.
func (Encoder) Commands() []string {
	return []string{devproto.CmdEngineStop, devproto.CmdEngineResume, devproto.CmdPositionRequest,
		devproto.CmdSetInterval, devproto.CmdCustom}
}

// Encode appends c's sentence to dst.
func (Encoder) Encode(dst []byte, c devproto.Command, s *devproto.Session) ([]byte, error) {
	var verb string
	switch c.Type {
	case devproto.CmdEngineStop:
		verb = "J"
	case devproto.CmdEngineResume:
		verb = "K"
	case devproto.CmdPositionRequest:
		verb = "B"
	case devproto.CmdSetInterval:
		if _, _, ok := gps103Interval(c.Seconds); !ok {
			return dst, &devproto.CommandError{Field: "seconds",
				Message: "must be 1 to 59 seconds, whole minutes under an hour, or 1 to 99 whole hours for this protocol"}
		}
		verb = "C,"
	case devproto.CmdCustom:
		if err := devproto.CheckText(c, MaxCommand, ";", false); err != nil {
			return dst, err
		}
		verb = c.Text
	default:
		return dst, devproto.ErrCommandUnsupported
	}
	id, err := devproto.SessionIdentifier(s)
	if err != nil {
		return dst, err
	}
	dst = append(dst, "**,imei:"...)
	dst = append(dst, id...)
	dst = append(dst, ',')
	dst = append(dst, verb...)
	if c.Type == devproto.CmdSetInterval {
		n, unit, _ := gps103Interval(c.Seconds)
		if n < 10 {
			dst = append(dst, '0')
		}
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, unit)
	}
	return append(dst, ';'), nil
}

// gps103Interval writes seconds as the C command's count and unit (s, m
// or h, two digits each), ok false when they cannot say it exactly.
func gps103Interval(seconds int) (n int, unit byte, ok bool) {
	switch {
	case seconds >= 1 && seconds < 60:
		return seconds, 's', true
	case seconds >= 60 && seconds < 3600 && seconds%60 == 0:
		return seconds / 60, 'm', true
	case seconds >= 3600 && seconds <= 99*3600 && seconds%3600 == 0:
		return seconds / 3600, 'h', true
	}
	return 0, 0, false
}

// gps103Answer reports whether a report's keyword acknowledges a command:
// the command's letter in lower case, and `t` (`jt`, `kt`).
func gps103Answer(keyword string) bool {
	return len(keyword) == 2 && keyword[0] >= 'a' && keyword[0] <= 'z' && keyword[1] == 't'
}
