package fleetdevice

import "slices"

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
}

// Serves reports whether the protocol is served over t.
func (p Protocol) Serves(t Transport) bool { return slices.Contains(p.Transports, t) }

// protocols is every protocol, in the order of API.md §13.
var protocols = []Protocol{
	{Name: OsmAndName, Port: 5055, Transports: []Transport{HTTP}},
	{Name: "teltonika", Port: 5027, Transports: []Transport{TCP, UDP}, Decoder: teltonika{}},
	{Name: "gt06", Port: 5023, Transports: []Transport{TCP}, Decoder: gt06{}},
	{Name: "h02", Port: 5013, Transports: []Transport{TCP, UDP}, Decoder: h02{}},
	{Name: "queclink", Port: 5004, Transports: []Transport{TCP, UDP}, Decoder: queclink{}},
	{Name: "gps103", Port: 5001, Transports: []Transport{TCP}, Decoder: gps103{}},
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

// Teltonika returns the teltonika protocol's decoder.
func Teltonika() Decoder { return teltonika{} }

// GT06 returns the gt06 protocol's decoder.
func GT06() Decoder { return gt06{} }

// H02 returns the h02 protocol's decoder.
func H02() Decoder { return h02{} }

// Queclink returns the queclink protocol's decoder.
func Queclink() Decoder { return queclink{} }

// GPS103 returns the gps103 protocol's decoder.
func GPS103() Decoder { return gps103{} }
