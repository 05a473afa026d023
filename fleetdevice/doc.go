// Package fleetdevice is the device edge of Fleet: GPS trackers and phone
// apps that report positions in their own protocols (API.md §13).
//
// It has two halves. Decoders are pure functions from bytes to messages,
// a package each protocol: teltonika, gt06, h02, queclink, gps103 (streams
// over TCP, and UDP where the protocol has a datagram form) and osmand
// (HTTP). A stream protocol's Decoder finds a frame in a stream (Split) and
// turns one frame, or one datagram, into a Message of positions in the
// API's units, with the acknowledgement the device expects (Decode). They
// know nothing of connections, stores or time beyond what the Session
// hands them, share what every decoder needs in package devproto (the
// types, the binary and text readers, the CRCs, the civil-date check, the
// vocabulary of attributes), and are table-tested on real captures (each
// package's testdata/) and fuzzed.
//
// Listeners, in this package, own the connections (TCP, UDP and OsmAnd's
// HTTP: ServeTCP, ServeUDP, ServeOsmAnd), and reach the domain only
// through fleet.Service's device edge: a protocol never decides what is
// stored, fleet's rules do, and a device is acknowledged only once what it
// sent is durable. The table of protocols (Protocols) holds how each is
// served: its name, conventional port, transports and decoder; --devices,
// ParseEndpoints and the documentation's table of ports read it.
//
// The packages import one way: fleetdevice imports the protocol packages,
// each of which imports devproto alone (of Fleet); devproto imports nothing
// of Fleet. A new protocol is a folder beside the others, holding its
// decoder, its tests and its testdata/, and a row in the table. Commands
// to devices go the other way: a protocol's encoder, a pure function that
// turns a command into the bytes the device reads, belongs in its package
// beside its decoder (encode.go).
//
// The types a listener hands a decoder and gets back (Message, Position,
// Session...) are devproto's, under the same names here.
package fleetdevice
