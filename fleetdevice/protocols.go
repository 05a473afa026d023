package fleetdevice

import "github.com/fleetkit/fleetapi/fleetdevice/devproto"

// Protocol is one protocol's decoder and its listener settings.
type Protocol interface {
	devproto.Decoder
	// Port is the protocol's conventional port.
	Port() int
	// UDP reports whether the protocol has a datagram form.
	UDP() bool
}

// Protocols returns every stream protocol's decoder, in the order of
// API.md §13. OsmAnd, which is HTTP, is DecodeOsmAnd.
func Protocols() []Protocol {
	return []Protocol{Teltonika(), GT06(), H02(), Queclink(), GPS103()}
}

// OsmAndPort is the OsmAnd protocol's conventional port (HTTP).
const OsmAndPort = 5055

// Teltonika returns the teltonika protocol's decoder.
func Teltonika() Protocol { return teltonika{} }

// GT06 returns the gt06 protocol's decoder.
func GT06() Protocol { return gt06{} }

// H02 returns the h02 protocol's decoder.
func H02() Protocol { return h02{} }

// Queclink returns the queclink protocol's decoder.
func Queclink() Protocol { return queclink{} }

// GPS103 returns the gps103 protocol's decoder.
func GPS103() Protocol { return gps103{} }
