package devproto

import "errors"

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
	// Seq numbers the commands a connection writes, for protocols whose
	// frames carry a serial number or a server flag that the answer echoes.
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
