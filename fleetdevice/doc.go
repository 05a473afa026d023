// Package fleetdevice is the device edge of Fleet: GPS trackers and phone
// apps that report positions in their own protocols (API.md §13).
//
// It has two halves. Decoders are pure functions from bytes to messages
// (package devproto holds what they share): Split finds a frame in a
// stream, Decode turns one frame (or one datagram) into a Message of
// positions, in the API's units, with the acknowledgement the device
// expects. They know nothing of connections, stores or time beyond what
// the Session hands them, and are table-tested on real captures
// (testdata/) and fuzzed. Listeners own the connections (TCP, UDP and
// OsmAnd's HTTP), and reach the domain only through fleet.Service's device
// edge: a protocol never decides what is stored, fleet's rules do, and a
// device is acknowledged only once what it sent is durable.
package fleetdevice
