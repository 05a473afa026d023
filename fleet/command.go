package fleet

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Commands to devices (API.md §16): cut or restore the engine, ask for a
// position now, change the reporting interval, switch an output, reboot,
// or send the protocol's own text. Fleet decides what is sent and when
// (the queue, expiry, the engine-stop interlock); an encoder of the device's
// protocol turns a command into bytes, and the listener that holds the
// device's connection writes it (see DeviceEdge.ClaimCommands). The use
// cases are in service_commands.go, the store's part in store_commands.go.

// The command types.
const (
	CommandEngineStop      = "engine_stop"
	CommandEngineResume    = "engine_resume"
	CommandPositionRequest = "position_request"
	CommandSetInterval     = "set_interval"
	CommandOutput          = "output"
	CommandReboot          = "reboot"
	CommandCustom          = "custom"
)

var commandTypes = []string{CommandEngineStop, CommandEngineResume, CommandPositionRequest, CommandSetInterval,
	CommandOutput, CommandReboot, CommandCustom}

// CommandTypes lists every command type, in the order of API.md §16.
func CommandTypes() []string { return slices.Clone(commandTypes) }

// CommandStatus is where a command stands: queued → sent → delivered, or
// failed, expired or cancelled.
type CommandStatus string

const (
	CommandQueued    CommandStatus = "queued"
	CommandSent      CommandStatus = "sent"
	CommandDelivered CommandStatus = "delivered"
	CommandFailed    CommandStatus = "failed"
	CommandExpired   CommandStatus = "expired"
	CommandCancelled CommandStatus = "cancelled"
)

// CommandStatuses lists every status of a command.
func CommandStatuses() []CommandStatus {
	return []CommandStatus{CommandQueued, CommandSent, CommandDelivered, CommandFailed, CommandExpired, CommandCancelled}
}

// Valid reports whether st is a known status.
func (st CommandStatus) Valid() bool { return slices.Contains(CommandStatuses(), st) }

// commandMoves is the state machine: the statuses each status may move to.
// A sent command goes back to queued when the connection it was claimed
// for closed before it was written.
var commandMoves = map[CommandStatus][]CommandStatus{
	CommandQueued: {CommandSent, CommandFailed, CommandExpired, CommandCancelled},
	CommandSent:   {CommandDelivered, CommandFailed, CommandQueued},
}

// CommandMoves returns the statuses a command in status from may move to.
func CommandMoves(from CommandStatus) []CommandStatus { return slices.Clone(commandMoves[from]) }

// CanMove reports whether a command may move from st to to.
func (st CommandStatus) CanMove(to CommandStatus) bool { return slices.Contains(commandMoves[st], to) }

// Limits and defaults of commands.
const (
	// DefaultCommandTTL is how long a command waits for its device unless
	// expires_at says otherwise; MaxCommandTTL how long it may wait.
	DefaultCommandTTL = 24 * time.Hour
	MaxCommandTTL     = 7 * 24 * time.Hour
	// EngineStopMaxSpeed is the speed (km/h) from which an engine_stop is
	// held: it is sent once a report shows the vehicle slower.
	EngineStopMaxSpeed = 10.0
	// MinCommandInterval and MaxCommandInterval bound set_interval's
	// seconds; MaxOutputIndex an output's number.
	MinCommandInterval = 1
	MaxCommandInterval = 86_400
	MaxOutputIndex     = 8
	// MaxCommandText bounds a custom command's text, and MaxCommandHex its
	// bytes, whatever the protocol (a protocol may allow fewer:
	// ProtocolCommands.MaxText).
	MaxCommandText = 512
	MaxCommandHex  = 512
	// MaxCommandResult bounds the answer of a device kept in result, and
	// MaxCommandError the reason kept in error (bytes).
	MaxCommandResult = 1024
	MaxCommandError  = 512
	// MaxQueuedCommands is how many commands one device may have queued.
	MaxQueuedCommands = 100
	// CommandRetention is how long a command is kept after it was made.
	CommandRetention = 30 * 24 * time.Hour
)

// ProtocolCommands is what a device protocol can carry, as its encoder
// says: the command types, and the longest custom text or bytes (0: the
// MaxCommandText). A program that serves devices hands the service each
// protocol's (Options.Protocols), so that a command the device's protocol
// cannot carry is refused when it is posted rather than failing later.
type ProtocolCommands struct {
	Types   []string
	MaxText int
}

// Command is a command to a device. Optional fields are nil or "" when
// unset (null on the wire).
type Command struct {
	ID        string `json:"command_id"`
	AccountID string `json:"-"`
	DeviceID  string `json:"device_id"`
	Type      string `json:"type"`
	// Seconds is set_interval's interval; Index and On output's number
	// and state.
	Seconds *int  `json:"seconds"`
	Index   *int  `json:"index"`
	On      *bool `json:"on"`
	// Text or Hex (hex digits, lower case) is custom's payload.
	Text string `json:"text"`
	Hex  string `json:"hex"`
	// Force sends an engine_stop whatever the vehicle's speed.
	Force  bool          `json:"force"`
	Status CommandStatus `json:"status"`
	// Result is the device's answer, when it sent one; Error why the
	// command is held, failed, expired or cancelled.
	Result    string     `json:"result"`
	Error     string     `json:"error"`
	CreatedBy string     `json:"created_by"`
	ExpiresAt time.Time  `json:"expires_at"`
	CreatedAt time.Time  `json:"created_at"`
	SentAt    *time.Time `json:"sent_at"`
	// DeliveredAt is when the device acknowledged it.
	DeliveredAt *time.Time `json:"delivered_at"`
	// FinishedAt is when it failed, expired or was cancelled.
	FinishedAt *time.Time `json:"-"`
}

// Clone returns a copy of c that shares no memory with it.
func (c Command) Clone() Command {
	c.Seconds, c.Index, c.On = clonePtr(c.Seconds), clonePtr(c.Index), clonePtr(c.On)
	c.SentAt, c.DeliveredAt, c.FinishedAt = clonePtr(c.SentAt), clonePtr(c.DeliveredAt), clonePtr(c.FinishedAt)
	return c
}

// Bytes returns custom's Hex as bytes (nil when unset or not hex).
func (c Command) Bytes() []byte {
	b, _ := hex.DecodeString(c.Hex)
	return b
}

// IsEngine reports whether the command is an engine stop or resume.
func (c Command) IsEngine() bool { return c.Type == CommandEngineStop || c.Type == CommandEngineResume }

// MarshalJSON writes the command as the API shows it: null for what is
// unset (the members of other types, no result, no error).
func (c Command) MarshalJSON() ([]byte, error) {
	type out struct {
		ID          string        `json:"command_id"`
		DeviceID    string        `json:"device_id"`
		Type        string        `json:"type"`
		Seconds     *int          `json:"seconds"`
		Index       *int          `json:"index"`
		On          *bool         `json:"on"`
		Text        *string       `json:"text"`
		Hex         *string       `json:"hex"`
		Force       bool          `json:"force"`
		Status      CommandStatus `json:"status"`
		Result      *string       `json:"result"`
		Error       *string       `json:"error"`
		CreatedBy   string        `json:"created_by"`
		ExpiresAt   time.Time     `json:"expires_at"`
		CreatedAt   time.Time     `json:"created_at"`
		SentAt      *time.Time    `json:"sent_at"`
		DeliveredAt *time.Time    `json:"delivered_at"`
	}
	return json.Marshal(out{ID: c.ID, DeviceID: c.DeviceID, Type: c.Type, Seconds: c.Seconds, Index: c.Index, On: c.On,
		Text: nullText(c.Text), Hex: nullText(c.Hex), Force: c.Force, Status: c.Status, Result: nullText(c.Result),
		Error: nullText(c.Error), CreatedBy: c.CreatedBy, ExpiresAt: c.ExpiresAt, CreatedAt: c.CreatedAt,
		SentAt: c.SentAt, DeliveredAt: c.DeliveredAt})
}

func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CommandInput is what a client posts to send a command.
type CommandInput struct {
	Type    string
	Seconds *int
	Index   *int
	On      *bool
	Text    *string
	Hex     *string
	Force   bool
	// ExpiresAt is when it stops waiting for the device: after now and at
	// most MaxCommandTTL ahead; nil for DefaultCommandTTL.
	ExpiresAt *time.Time
}

// CommandFilter selects a device's commands; zero fields select all.
type CommandFilter struct {
	Status CommandStatus
}

// Match reports whether c passes the filter.
func (f CommandFilter) Match(c *Command) bool { return f.Status == "" || c.Status == f.Status }

// build checks in against the rules of API.md §16 and the protocol the
// device last spoke (pc, nil when unknown), and returns the command it
// makes (without ids, times or creator). A bad value is validation_error
// naming every bad field; a type the protocol cannot carry is conflict
// naming those it can.
func (in CommandInput) build(protocol string, pc *ProtocolCommands, now time.Time) (Command, error) {
	var val Validator
	c := Command{Type: in.Type, Force: in.Force, Status: CommandQueued, ExpiresAt: now.Add(DefaultCommandTTL)}
	allowed := func(field string, ok bool) {
		if !ok {
			val.Add(field, "is not a member of a %s command", in.Type)
		}
	}
	typeKnown := slices.Contains(commandTypes, in.Type)
	if !typeKnown {
		val.Add("type", "must be one of %s", strings.Join(commandTypes, ", "))
	} else {
		allowed("seconds", in.Seconds == nil || in.Type == CommandSetInterval)
		allowed("index", in.Index == nil || in.Type == CommandOutput)
		allowed("on", in.On == nil || in.Type == CommandOutput)
		allowed("text", in.Text == nil || in.Type == CommandCustom)
		allowed("hex", in.Hex == nil || in.Type == CommandCustom)
		allowed("force", !in.Force || in.Type == CommandEngineStop)
	}
	maxText, maxHex := MaxCommandText, MaxCommandHex
	if pc != nil && pc.MaxText > 0 {
		maxText, maxHex = min(maxText, pc.MaxText), min(maxHex, pc.MaxText)
	}
	switch in.Type {
	case CommandSetInterval:
		if in.Seconds == nil {
			val.Add("seconds", "is required for set_interval")
		} else if *in.Seconds < MinCommandInterval || *in.Seconds > MaxCommandInterval {
			val.Add("seconds", "must be between %d and %d", MinCommandInterval, MaxCommandInterval)
		} else {
			c.Seconds = clonePtr(in.Seconds)
		}
	case CommandOutput:
		if in.Index == nil {
			val.Add("index", "is required for output")
		} else if *in.Index < 1 || *in.Index > MaxOutputIndex {
			val.Add("index", "must be between 1 and %d", MaxOutputIndex)
		} else {
			c.Index = clonePtr(in.Index)
		}
		if in.On == nil {
			val.Add("on", "is required for output")
		} else {
			c.On = clonePtr(in.On)
		}
	case CommandCustom:
		switch {
		case (in.Text == nil) == (in.Hex == nil):
			val.Add("text", "exactly one of text and hex is required for custom")
		case in.Text != nil:
			t := *in.Text
			if t == "" {
				val.Add("text", "must not be empty")
			} else if i := controlByte(t); i >= 0 {
				val.Add("text", "must not contain control characters (byte %d is 0x%02x)", i, t[i])
			} else if len(t) > maxText {
				val.Add("text", "must be at most %d bytes%s", maxText, forProtocol(protocol, pc))
			} else {
				c.Text = t
			}
		default:
			h := strings.ToLower(*in.Hex)
			b, err := hex.DecodeString(h)
			switch {
			case h == "":
				val.Add("hex", "must not be empty")
			case err != nil:
				val.Add("hex", "must be hex digits, two per byte")
			case len(b) > maxHex:
				val.Add("hex", "must be at most %d bytes%s", maxHex, forProtocol(protocol, pc))
			default:
				c.Hex = h
			}
		}
	}
	if in.ExpiresAt != nil {
		e := Timestamp(*in.ExpiresAt)
		if !e.After(now) || e.After(now.Add(MaxCommandTTL)) {
			val.Add("expires_at", "must be in the future and at most %d days ahead", int(MaxCommandTTL/(24*time.Hour)))
		} else {
			c.ExpiresAt = e
		}
	}
	if err := val.Err(); err != nil {
		return Command{}, err
	}
	if pc != nil && typeKnown && !slices.Contains(pc.Types, in.Type) {
		e := Errorf(CodeConflict, "The device speaks %s, which cannot carry a %s command; it can carry: %s.",
			protocol, in.Type, strings.Join(pc.Types, ", "))
		e.Details = []FieldError{{Field: "type", Message: "cannot be carried by " + protocol + "; it can carry " + strings.Join(pc.Types, ", ")}}
		return Command{}, e
	}
	return c, nil
}

func forProtocol(protocol string, pc *ProtocolCommands) string {
	if pc == nil || pc.MaxText <= 0 || pc.MaxText >= MaxCommandText {
		return ""
	}
	return " for " + protocol
}

// controlByte returns the index of the first control byte of s (below 0x20,
// or DEL), or -1.
func controlByte(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return i
		}
	}
	return -1
}

// errCommandMove is the invalid_state_transition of a command.
func errCommandMove(from, to CommandStatus) error {
	return Errorf(CodeInvalidStateTransition, "A command cannot move from %s to %s.", from, to)
}

// heldReason is the error of an engine_stop held because the device's last
// report shows speed km/h.
func heldReason(speed float64) string {
	return fmt.Sprintf("Held: the vehicle's latest report shows %.0f km/h; the engine stop is sent once a report shows it under %.0f km/h (or post it again with force).",
		speed, EngineStopMaxSpeed)
}

// holds reports whether an engine_stop c must wait, given the device's last
// report (nil when none), and the speed it shows.
func (c Command) holds(lr *LastReport) (float64, bool) {
	if c.Type != CommandEngineStop || c.Force || lr == nil || lr.Position.Speed == nil {
		return 0, false
	}
	v := *lr.Position.Speed
	return v, v >= EngineStopMaxSpeed
}

// ClaimedCommand is a command a listener is to write to its device now:
// what the protocol's encoder needs of it.
type ClaimedCommand struct {
	ID      string
	Type    string
	Seconds int
	Index   int
	On      bool
	Text    string
	Hex     []byte
}

func (c Command) claimed() ClaimedCommand {
	cc := ClaimedCommand{ID: c.ID, Type: c.Type, Text: c.Text, Hex: c.Bytes()}
	if c.Seconds != nil {
		cc.Seconds = *c.Seconds
	}
	if c.Index != nil {
		cc.Index = *c.Index
	}
	if c.On != nil {
		cc.On = *c.On
	}
	return cc
}
