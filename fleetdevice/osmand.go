package fleetdevice

// OsmAndRequest is one HTTP request of the OsmAnd protocol (the Traccar
// Client apps and most DIY senders), as the listener read it.
type OsmAndRequest struct {
	Method      string
	RawQuery    string // the URL's query, without '?'
	ContentType string
	Body        []byte // at most the listener's body limit
}

// DecodeOsmAnd decodes one OsmAnd request into m: one position, the
// device's identifier in m.Identifier, and in m.Reply the body of the
// 200 answer (empty). It reports whether the request was the JSON form
// (whose unknown identifier is answered 404, the query and form ones'
// 400). An error means the request is not one of the protocol (400).
//
// Not written yet: every request is garbage.
func DecodeOsmAnd(r OsmAndRequest, s *Session, m *Message) (json bool, err error) {
	return false, ErrGarbage
}
