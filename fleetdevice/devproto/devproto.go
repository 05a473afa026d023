// Package devproto is what the decoders of device protocols share: the
// Message a frame decodes to (positions in the API's units, attributes in
// the common vocabulary of API.md §14, the acknowledgement the device
// expects), the Session a listener hands a decoder, the Decoder interface
// every stream protocol implements, its error values, and the helpers of
// framing and decoding: a bounds-checked big-endian reader (BinReader) and
// the CRCs of the binary protocols, the text protocols' frame splitter,
// patterns and group reader (SplitText, Pattern, Groups), the civil-date
// check that makes an impossible date no fix (CivilTime), and the
// vocabulary's names and checks (AttrIgnition, AttrTextOK, AlarmJoin...).
//
// Each protocol is a package beside this one (fleetdevice/teltonika,
// fleetdevice/gt06...) that imports it, and nothing else of Fleet; the
// listeners of package fleetdevice serve them. A decoder is a pure
// function from bytes to a Message: it knows nothing of connections,
// stores or time beyond what the Session hands it. This package imports
// nothing of Fleet.
package devproto

import (
	"errors"
	"strconv"
	"time"
)

// Transport is how a frame arrived.
type Transport uint8

const (
	TCP Transport = iota
	UDP
	HTTP
)

func (t Transport) String() string {
	switch t {
	case TCP:
		return "tcp"
	case UDP:
		return "udp"
	case HTTP:
		return "http"
	}
	return "transport(" + strconv.Itoa(int(t)) + ")"
}

// Decoding errors. Anything else a decoder returns is treated as ErrGarbage.
var (
	// ErrGarbage: the bytes cannot start or continue a frame of the
	// protocol, or claim an impossible length. The listener closes the
	// connection (a datagram is dropped).
	ErrGarbage = errors.New("devproto: not a frame of the protocol")
	// ErrChecksum: a whole frame whose checksum does not verify. It is
	// neither decoded nor acknowledged (the device sends it again); the
	// connection stays open.
	ErrChecksum = errors.New("devproto: checksum mismatch")
)

// Kind is what a message is, for the listener's handling of it.
type Kind uint8

const (
	// KindOther: a well-formed frame without positions (a status report,
	// an answer to a command...). Its Reply, if any, is sent at once.
	KindOther Kind = iota
	// KindLogin names the device (Message.Identifier) for the rest of the
	// connection. The listener answers Reply if the identifier is
	// registered, else Reject (nil: none) and closes.
	KindLogin
	// KindHeartbeat keeps the connection alive; Reply, if any, is sent at
	// once.
	KindHeartbeat
	// KindPositions carries Positions (possibly none with a fix). Reply is
	// sent only once the positions are durable.
	KindPositions
)

func (k Kind) String() string {
	switch k {
	case KindOther:
		return "other"
	case KindLogin:
		return "login"
	case KindHeartbeat:
		return "heartbeat"
	case KindPositions:
		return "positions"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Position is one position a device reported, in the API's units: speed in
// km/h (knots × 1.852, m/s × 3.6), heading in degrees clockwise from north,
// altitude in metres, time in UTC. Optional values are set with their Has
// flag, so that a Position is a plain value (decoding allocates nothing per
// position).
type Position struct {
	Time       time.Time
	Latitude   float64
	Longitude  float64
	Speed      float64
	Heading    float64
	Altitude   float64
	Satellites int

	HasSpeed, HasHeading, HasAltitude, HasSatellites bool
	// Valid: the device had a fix. A position without one is kept as the
	// device's last report only, never stored as a location.
	Valid bool

	// Attrs are the other values sent with the position (battery,
	// ignition, I/O elements...), in the order they came.
	Attrs []Attribute
}

// AttrKind is the type of an attribute's value.
type AttrKind uint8

const (
	AttrNumber AttrKind = iota
	AttrBool
	AttrString
)

// Attribute is one named value a device sent beside a position, named
// and converted to the common vocabulary of API.md §14 ("ignition",
// "power_v" in volts, "odometer_km"...; docs/telematics.md has each
// protocol's table) or, for a value without a common name, by a name of
// its protocol. Names match ^[a-z][a-z0-9_]{0,31}$, numbers are finite,
// text is at most 64 bytes without control characters.
type Attribute struct {
	// Key names it ("ignition", "power_v", "hdop"...). When empty, the
	// name is "io" followed by IO, a protocol's numbered I/O element
	// (Teltonika), so that decoding needs no string per element.
	Key  string
	IO   int
	Kind AttrKind
	Num  float64 // AttrNumber; AttrBool: 1 or 0
	Str  string  // AttrString
}

// Name is the attribute's name as the API shows it.
func (a Attribute) Name() string {
	if a.Key != "" {
		return a.Key
	}
	return "io" + strconv.Itoa(a.IO)
}

// Value is the attribute's value as JSON shows it: float64, bool or string.
func (a Attribute) Value() any {
	switch a.Kind {
	case AttrBool:
		return a.Num != 0
	case AttrString:
		return a.Str
	}
	return a.Num
}

// Message is what one frame decodes to.
type Message struct {
	Kind Kind
	// Identifier is the device's identifier when the frame carries it
	// (a login, or text protocols that repeat it in every frame); "" when
	// the connection's login named it (Session.Identifier).
	Identifier string
	// Positions in the order the frame carries them (a Teltonika frame
	// often ends with its oldest record).
	Positions []Position
	// Reply is the acknowledgement the device expects, byte-exact: for
	// KindPositions sent once the positions are durable, for the other
	// kinds at once (a login's only when its identifier is registered).
	// Empty: the protocol expects none.
	Reply []byte
	// Reject is written before closing the connection of a login (or a
	// report) whose identifier is not registered; empty: close only.
	Reject []byte
	// Close asks the listener to close the connection after Reply.
	Close bool
	// CommandResult is the device's answer to a command the connection
	// wrote (its text, as the protocol carries it), when HasResult is set;
	// ResultSeq is the command's Seq when the protocol echoes it (GT06
	// all of it, Queclink its low 16 bits), else 0 (the answer is the
	// oldest command's written and not yet answered). An answer is
	// KindOther, or KindPositions where the protocol's answer carries the
	// device's position too (H02's V4, GT06's "Current position!").
	CommandResult string
	HasResult     bool
	ResultSeq     uint32

	// strs keeps the strings decoding made of bytes (a driver's key), for
	// the next records and frames of the connection.
	strs strCache
}

// Intern returns b as a string, the one made for the same bytes by an
// earlier record or frame of the connection when there is one (a driver's
// key, repeated in every record), so that the same again costs no
// allocation. The strings are immutable: handing them on is safe.
func (m *Message) Intern(b []byte) string { return m.strs.get(b) }

// InternNumber returns the text of v in format (a letter naming it), the
// one made earlier by the connection when it is the same, else the one
// write appends to a buffer.
func (m *Message) InternNumber(v uint64, format byte, write func([]byte) []byte) string {
	return m.strs.number(v, format, write)
}

// Reset empties m for the next frame, keeping what it allocated.
func (m *Message) Reset() {
	for i := range m.Positions {
		m.Positions[i].Attrs = m.Positions[i].Attrs[:0]
	}
	*m = Message{Positions: m.Positions[:0], Reply: m.Reply[:0], strs: m.strs}
}

// Session is what a connection remembers between frames, and what the
// listener hands a decoder of the world outside the bytes.
type Session struct {
	// Transport is how the frame arrived.
	Transport Transport
	// Identifier is the identifier the connection's login named ("" before
	// one). A decoder of a protocol whose data frames do not carry it sets
	// it on login; the listener checks it is registered before replying.
	Identifier string
	// Now is the server's clock at the frame's arrival, for protocols
	// whose replies carry the time or whose frames may lack one.
	Now time.Time
	// Offset is the device clock's offset from UTC when the protocol told
	// it (GT06's login), applied to the times it sends without a zone.
	Offset    time.Duration
	HasOffset bool
}

// Decoder decodes one protocol's frames and datagrams.
type Decoder interface {
	// Name is the protocol's name in --devices and the API ("teltonika").
	Name() string
	// MaxFrame bounds a frame's size in bytes; a stream that has not
	// completed a frame within it is garbage.
	MaxFrame() int
	// Split returns the length of the frame at the start of buf, or 0
	// when buf holds only the beginning of one (read more), or ErrGarbage
	// when buf cannot start a frame of the protocol. It never allocates in
	// proportion to a length the bytes claim.
	Split(buf []byte) (int, error)
	// Decode decodes one frame that Split found (TCP), or one datagram
	// (UDP, s.Transport), into m (which the caller has Reset). It may set
	// s.Identifier (login) and s.Offset. It returns ErrChecksum for a frame
	// whose checksum fails, ErrGarbage for bytes it cannot make sense of.
	Decode(frame []byte, s *Session, m *Message) error
}
