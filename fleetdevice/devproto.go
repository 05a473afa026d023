package fleetdevice

import "github.com/fleetkit/fleetapi/fleetdevice/devproto"

// The names of the decoders' package, devproto, as fleetdevice's: what a
// listener hands a decoder and what it gets back.
type (
	Transport = devproto.Transport
	Kind      = devproto.Kind
	Position  = devproto.Position
	AttrKind  = devproto.AttrKind
	Attribute = devproto.Attribute
	Message   = devproto.Message
	Session   = devproto.Session
	Decoder   = devproto.Decoder
	Encoder   = devproto.Encoder
	Command   = devproto.Command
	// CommandError is an encoder's refusal of a command it cannot carry as
	// given.
	CommandError = devproto.CommandError
)

// Transports.
const (
	TCP  = devproto.TCP
	UDP  = devproto.UDP
	HTTP = devproto.HTTP
)

// Kinds of messages.
const (
	KindOther     = devproto.KindOther
	KindLogin     = devproto.KindLogin
	KindHeartbeat = devproto.KindHeartbeat
	KindPositions = devproto.KindPositions
)

// Kinds of attributes.
const (
	AttrNumber = devproto.AttrNumber
	AttrBool   = devproto.AttrBool
	AttrString = devproto.AttrString
)

// Decoding errors (devproto's).
var (
	ErrGarbage  = devproto.ErrGarbage
	ErrChecksum = devproto.ErrChecksum
	// ErrCommandUnsupported: the protocol cannot carry the command's type.
	ErrCommandUnsupported = devproto.ErrCommandUnsupported
	// ErrNoIdentifier: the command names the device, and the session has
	// no identifier.
	ErrNoIdentifier = devproto.ErrNoIdentifier
)
