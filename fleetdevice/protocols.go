package fleetdevice

// Protocols returns every stream protocol's decoder, in the order of
// API.md §13. OsmAnd, which is HTTP, is DecodeOsmAnd.
func Protocols() []Protocol {
	return []Protocol{Teltonika(), GT06(), H02(), Queclink(), GPS103()}
}

// OsmAndPort is the OsmAnd protocol's conventional port (HTTP).
const OsmAndPort = 5055
