package fleetdevice

import (
	"testing"

	"github.com/matryer/is"
)

// The table of protocols: one row a protocol, each name and port once, a
// stream protocol's decoder of its own name served over TCP (and UDP
// where it has a datagram form), OsmAnd over HTTP alone without one.
func TestProtocolTable(t *testing.T) {
	is := is.New(t)
	ps := Protocols()
	is.Equal(len(ps), 6)
	names, ports := map[string]bool{}, map[int]bool{}
	for _, p := range ps {
		is.True(!names[p.Name]) // a name once
		is.True(!ports[p.Port]) // a port once
		names[p.Name], ports[p.Port] = true, true
		is.True(p.Port > 0 && p.Port < 65536)
		if p.Name == OsmAndName {
			is.Equal(p.Decoder, nil)
			is.Equal(p.Transports, []Transport{HTTP})
			continue
		}
		is.True(p.Decoder != nil)
		is.Equal(p.Decoder.Name(), p.Name)
		is.True(p.Decoder.MaxFrame() > 0)
		is.True(p.Serves(TCP))
		is.True(!p.Serves(HTTP))
		got, ok := ProtocolNamed(p.Name)
		is.True(ok)
		is.Equal(got.Name, p.Name)
	}
	is.Equal(ProtocolNames(), []string{"osmand", "teltonika", "gt06", "h02", "queclink", "gps103"})
	_, ok := ProtocolNamed("traccar")
	is.True(!ok)

	// What a caller gets is its own: changing it changes nothing here.
	ps[1].Transports[0] = HTTP
	ps[1].Port = 1
	again, _ := ProtocolNamed(ps[1].Name)
	is.Equal(again.Port, 5027)
	is.Equal(again.Transports, []Transport{TCP, UDP})
}
