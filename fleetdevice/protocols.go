package fleetdevice

import (
	"slices"

	"github.com/fleetkit/fleetapi/fleetdevice/gps103"
	"github.com/fleetkit/fleetapi/fleetdevice/gt06"
	"github.com/fleetkit/fleetapi/fleetdevice/h02"
	"github.com/fleetkit/fleetapi/fleetdevice/osmand"
	"github.com/fleetkit/fleetapi/fleetdevice/queclink"
	"github.com/fleetkit/fleetapi/fleetdevice/teltonika"
)

// Protocol is how one protocol is served: the listener's settings of it
// beside its decoder. The table of every protocol (Protocols) is what
// --devices, ParseEndpoints, the load tool and docs/devices.md's table of
// ports read.
type Protocol struct {
	// Name is the protocol's name in --devices and the API ("teltonika").
	Name string
	// Port is its conventional port (Traccar's, so that a device set up
	// for a Traccar server needs only its host changed).
	Port int
	// Transports are how its devices reach the server: TCP, and UDP on
	// the same port where the protocol has a datagram form; HTTP for
	// OsmAnd.
	Transports []Transport
	// Decoder decodes its frames (TCP) and datagrams (UDP); nil for
	// OsmAnd, whose requests the Server's OsmAnd handler decodes.
	Decoder Decoder
	// Encoder encodes the commands sent to its devices (OsmAnd's: the
	// body of the answer to the next request); its Commands are the types
	// the protocol carries. A device's answer to a command is read by the
	// Decoder (Message.HasResult).
	Encoder Encoder
	// MaxText bounds a custom command's text (or bytes) on the protocol.
	MaxText int
}

// Serves reports whether the protocol is served over t.
func (p Protocol) Serves(t Transport) bool { return slices.Contains(p.Transports, t) }

// protocols is every protocol, in the order of API.md §13.
var protocols = []Protocol{
	{Name: OsmAndName, Port: 5055, Transports: []Transport{HTTP}, Encoder: osmand.Encoder{}, MaxText: osmand.MaxCommand},
	{Name: "teltonika", Port: 5027, Transports: []Transport{TCP, UDP}, Decoder: teltonika.Decoder{}, Encoder: teltonika.Encoder{}, MaxText: teltonika.MaxCommand},
	{Name: "gt06", Port: 5023, Transports: []Transport{TCP}, Decoder: gt06.Decoder{}, Encoder: gt06.Encoder{}, MaxText: gt06.MaxCommand},
	{Name: "h02", Port: 5013, Transports: []Transport{TCP, UDP}, Decoder: h02.Decoder{}, Encoder: h02.Encoder{}, MaxText: h02.MaxCommand},
	{Name: "queclink", Port: 5004, Transports: []Transport{TCP, UDP}, Decoder: queclink.Decoder{}, Encoder: queclink.Encoder{}, MaxText: queclink.MaxCommand},
	{Name: "gps103", Port: 5001, Transports: []Transport{TCP}, Decoder: gps103.Decoder{}, Encoder: gps103.Encoder{}, MaxText: gps103.MaxCommand},
}

// Protocols returns every protocol's settings, in the order of API.md
// §13: OsmAnd (HTTP), then the stream protocols.
func Protocols() []Protocol {
	ps := slices.Clone(protocols)
	for i := range ps {
		ps[i].Transports = slices.Clone(ps[i].Transports)
	}
	return ps
}

// ProtocolNamed returns the settings of the protocol called name, ok false
// when there is none.
func ProtocolNamed(name string) (p Protocol, ok bool) {
	for _, p := range protocols {
		if p.Name == name {
			p.Transports = slices.Clone(p.Transports)
			return p, true
		}
	}
	return Protocol{}, false
}

// CommandTypes returns, for each protocol that carries commands, the
// types of API.md §16 it carries, in its order.
func CommandTypes() map[string][]string {
	types := make(map[string][]string, len(protocols))
	for name, c := range CommandSupports() {
		types[name] = c.Types
	}
	return types
}

// CommandSupport is what a protocol's commands carry, as plain data for
// fleet (fleet.ProtocolCommands), which refuses a command its device's
// protocol cannot carry when it is posted.
type CommandSupport struct {
	// Types are the command types it carries, in API.md §16's order.
	Types []string
	// MaxText bounds a custom command's text or bytes.
	MaxText int
}

// CommandSupports returns each protocol's CommandSupport, by name.
func CommandSupports() map[string]CommandSupport {
	cs := make(map[string]CommandSupport, len(protocols))
	for _, p := range protocols {
		if p.Encoder != nil {
			cs[p.Name] = CommandSupport{Types: p.Encoder.Commands(), MaxText: p.MaxText}
		}
	}
	return cs
}

// CheckCommand reports whether the protocol called name can carry c, by
// encoding it for a device of identifier "0": nil, ErrCommandUnsupported
// (the type, or a protocol without commands), or the *CommandError its
// encoder returns for a member it cannot carry as given (a custom text's
// form or characters, an interval the protocol cannot say), so that such
// a command is refused when it is posted rather than failing when it is
// sent.
func CheckCommand(name string, c Command) error {
	e, ok := EncoderNamed(name)
	if !ok {
		return ErrCommandUnsupported
	}
	s := Session{Transport: TCP, Identifier: "0"}
	if name == OsmAndName {
		s.Transport = HTTP
	}
	var scratch [256]byte
	_, err := e.Encode(scratch[:0], c, &s)
	return err
}

// EncoderNamed returns the encoder of commands of the protocol called
// name, ok false when it has none.
func EncoderNamed(name string) (e Encoder, ok bool) {
	p, ok := ProtocolNamed(name)
	if !ok || p.Encoder == nil {
		return nil, false
	}
	return p.Encoder, true
}

// Teltonika returns the teltonika protocol's decoder.
func Teltonika() Decoder { return teltonika.Decoder{} }

// GT06 returns the gt06 protocol's decoder.
func GT06() Decoder { return gt06.Decoder{} }

// H02 returns the h02 protocol's decoder.
func H02() Decoder { return h02.Decoder{} }

// Queclink returns the queclink protocol's decoder.
func Queclink() Decoder { return queclink.Decoder{} }

// GPS103 returns the gps103 protocol's decoder.
func GPS103() Decoder { return gps103.Decoder{} }

// OsmAndRequest is one HTTP request of the OsmAnd protocol (osmand.Request).
type OsmAndRequest = osmand.Request

// OsmAndMaxBody bounds the body of an OsmAnd request (osmand.MaxBody).
const OsmAndMaxBody = osmand.MaxBody

// DecodeOsmAnd decodes one OsmAnd request into m (osmand.Decode), and
// reports whether it was the JSON form.
func DecodeOsmAnd(r OsmAndRequest, s *Session, m *Message) (bool, error) {
	return osmand.Decode(r, s, m)
}
