package devproto

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// The command types of API.md §16, as fleet names them.
const (
	CmdEngineStop      = "engine_stop"
	CmdEngineResume    = "engine_resume"
	CmdPositionRequest = "position_request"
	CmdSetInterval     = "set_interval"
	CmdOutput          = "output"
	CmdReboot          = "reboot"
	CmdCustom          = "custom"
)

// ErrCommandUnsupported is what Encoder.Encode returns for a command type
// its protocol cannot carry (Encoder.Commands lists those it can).
var ErrCommandUnsupported = errors.New("devproto: the protocol cannot carry this command")

// ErrNoIdentifier is what Encoder.Encode returns when the protocol's
// command names the device and the Session has no identifier that can
// (IdentifierOK).
var ErrNoIdentifier = errors.New("devproto: the command names the device, and the session has no identifier")

// SessionIdentifier returns s's identifier, or ErrNoIdentifier.
func SessionIdentifier(s *Session) (string, error) {
	if s == nil || !IdentifierOK(s.Identifier) {
		return "", ErrNoIdentifier
	}
	return s.Identifier, nil
}

// Command is a command fleet decided to send, with what an encoder needs
// of it. Fleet has checked its fields against the contract; an encoder
// checks what its protocol adds (a custom text's length or characters)
// and returns a *CommandError for what it cannot carry.
type Command struct {
	Type    string
	Seconds int    // set_interval: the reporting interval
	Index   int    // output: the output's number, from 1
	On      bool   // output: switched on (true) or off
	Text    string // custom: the protocol's own text
	Hex     []byte // custom: the protocol's own bytes
	// Password is the device's password, for protocols whose commands
	// carry one (GT06's engine commands, Queclink's); empty: the
	// protocol's factory default.
	Password string
	// Seq numbers the commands a connection writes, for protocols whose
	// frames carry a serial number or a server flag that the answer echoes
	// (Message.ResultSeq): GT06 echoes all 32 bits, Queclink the low 16
	// (its serial number, 4 hex digits). Number them from 1, so that an
	// echoed 0 is no command of the connection.
	Seq uint32
}

// CommandError says why a command cannot be encoded for a protocol; Field
// names the command's member at fault ("text", "hex", "seconds", "index").
type CommandError struct {
	Field   string
	Message string
}

func (e *CommandError) Error() string { return e.Field + " " + e.Message }

// Encoder turns commands into the bytes a protocol's devices expect. It is
// a pure function of its arguments, beside the protocol's Decoder, and is
// fuzzed like it. A protocol's answer to a command is decoded by its
// Decoder, as a Message whose CommandResult is set.
type Encoder interface {
	// Commands lists the command types the protocol can carry, in the
	// order of API.md §16.
	Commands() []string
	// Encode appends to dst the bytes that carry c to the device of the
	// session s (its identifier, transport and clock). It returns
	// ErrCommandUnsupported for a type not in Commands and a
	// *CommandError for a command the protocol cannot carry as given.
	Encode(dst []byte, c Command, s *Session) ([]byte, error)
}

// CheckText checks the text of a custom command for a protocol that
// carries printable ASCII: present, at most max bytes, without control
// characters, bytes above 0x7E, or any byte of refuse (a protocol's own
// delimiters). A command with Hex is refused when the protocol carries
// text only (hexOK false). It returns nil or a *CommandError.
func CheckText(c Command, max int, refuse string, hexOK bool) error {
	if len(c.Hex) > 0 {
		if !hexOK {
			return &CommandError{Field: "hex", Message: "is not carried by this protocol: send text"}
		}
		if len(c.Hex) > max {
			return &CommandError{Field: "hex", Message: "is longer than the " + strconv.Itoa(max) + " bytes this protocol carries"}
		}
		return nil
	}
	if c.Text == "" {
		return &CommandError{Field: "text", Message: "is required"}
	}
	if len(c.Text) > max {
		return &CommandError{Field: "text", Message: "is longer than the " + strconv.Itoa(max) + " bytes this protocol carries"}
	}
	for i := 0; i < len(c.Text); i++ {
		b := c.Text[i]
		if b < 0x20 || b > 0x7E {
			return &CommandError{Field: "text", Message: "holds a control or non-ASCII byte at " + strconv.Itoa(i)}
		}
		if refuse != "" && strings.IndexByte(refuse, b) >= 0 {
			return &CommandError{Field: "text", Message: "holds " + strconv.Quote(string(b)) + ", which this protocol reserves"}
		}
	}
	return nil
}

// PrintableResult returns b as a command's result: its text, trimmed of
// spaces, line ends and NUL padding, when it is printable ASCII, else its
// bytes in lower-case hex (Traccar's rule for an answer it cannot read).
func PrintableResult(b []byte) string {
	t := bytesTrim(b)
	for _, c := range t {
		if c < 0x20 || c > 0x7E {
			return Hex(b)
		}
	}
	return string(t)
}

func bytesTrim(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\r' || c == '\n' || c == '\t' || c == 0 }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// CheckPassword returns c's password, or def when it has none, and a
// *CommandError when it is not 1 to 16 letters and digits (what the
// devices accept, and never a protocol's delimiter).
func CheckPassword(c Command, def string) (string, error) {
	if c.Password == "" {
		return def, nil
	}
	if len(c.Password) > 16 {
		return "", &CommandError{Field: "password", Message: "is longer than 16 characters"}
	}
	for i := 0; i < len(c.Password); i++ {
		b := c.Password[i]
		if !('0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z') {
			return "", &CommandError{Field: "password", Message: "must be letters and digits"}
		}
	}
	return c.Password, nil
}

// AppendClock appends t's hour, minute and second as hhmmss.
func AppendClock(dst []byte, t time.Time) []byte {
	h, m, sec := t.Clock()
	return append(dst, byte('0'+h/10), byte('0'+h%10), byte('0'+m/10), byte('0'+m%10),
		byte('0'+sec/10), byte('0'+sec%10))
}

// CheckSeconds returns a *CommandError unless c.Seconds is within
// [lo, hi], what the protocol's interval command carries.
func CheckSeconds(c Command, lo, hi int) error {
	if c.Seconds < lo || c.Seconds > hi {
		return &CommandError{Field: "seconds", Message: "must be " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi) + " for this protocol"}
	}
	return nil
}
