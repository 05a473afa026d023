package fleetdevice

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Endpoint is where one protocol is served.
type Endpoint struct {
	// Protocol is the protocol's name: one of Protocols()' names
	// (OsmAndName, "osmand", is served over HTTP).
	Protocol string
	// Addr is the host:port listened on (TCP, and UDP when UDP is set).
	Addr string
	// UDP reports whether the protocol's datagram form is served too, on
	// the same port.
	UDP bool
}

// Decoder is the decoder of the endpoint's stream protocol, or nil for
// OsmAnd.
func (e Endpoint) Decoder() Decoder {
	p, _ := ProtocolNamed(e.Protocol)
	return p.Decoder
}

// ProtocolNames are the names ParseEndpoints knows, in the order of "all"
// (Protocols()): OsmAnd, then the stream protocols.
func ProtocolNames() []string {
	var names []string
	for _, p := range protocols {
		names = append(names, p.Name)
	}
	return names
}

// ParseEndpoints parses the --devices LIST (API.md §13): comma-separated
// protocol=host:port entries ("teltonika=0.0.0.0:5027,osmand=0.0.0.0:5055"),
// or "all", every protocol on its conventional port on defaultHost (the
// host of --addr; "" listens on every interface). An empty spec is no
// endpoint: devices are off. Protocol names may be written in any case
// (Teltonika, OSMAND). A protocol with a datagram form (teltonika,
// h02, queclink) is served on UDP too, on the same port. Port 0 asks the
// system for a free port.
//
// It refuses, with an error naming the entry: an unknown protocol, an
// address that is not host:port with a port of 0–65535, a protocol named
// twice, and two protocols on the same port of the same (or every)
// interface.
func ParseEndpoints(spec, defaultHost string) ([]Endpoint, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	var eps []Endpoint
	if spec == "all" {
		if err := checkHost(defaultHost); err != nil {
			return nil, fmt.Errorf("devices: all: the host of --addr %q: %v", defaultHost, err)
		}
		for _, p := range protocols {
			eps = append(eps, Endpoint{Protocol: p.Name, Addr: net.JoinHostPort(defaultHost, strconv.Itoa(p.Port)), UDP: p.Serves(UDP)})
		}
		return eps, nil
	}
	type bound struct {
		entry, host string
	}
	ports := map[int][]bound{}
	seen := map[string]string{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, fmt.Errorf("devices: %q: an empty entry (want protocol=host:port, comma-separated)", spec)
		}
		if entry == "all" {
			return nil, fmt.Errorf("devices: %q: all stands alone, without other entries", spec)
		}
		name, addr, ok := strings.Cut(entry, "=")
		// Names are the table's, in any case: Teltonika is teltonika.
		name, addr = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(addr)
		if !ok || name == "" {
			return nil, fmt.Errorf("devices: %q: want protocol=host:port, or all", entry)
		}
		p, known := ProtocolNamed(name)
		if !known {
			return nil, fmt.Errorf("devices: %q: unknown protocol %q (known: %s)", entry, name, strings.Join(ProtocolNames(), ", "))
		}
		udp := p.Serves(UDP)
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("devices: %q: %s is already served (%q)", entry, name, prev)
		}
		seen[name] = entry
		host, portText, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("devices: %q: the address %q is not host:port", entry, addr)
		}
		port, err := strconv.Atoi(portText)
		if err != nil || port < 0 || port > 65535 || strings.HasPrefix(portText, "+") {
			return nil, fmt.Errorf("devices: %q: the port %q is not a number from 0 to 65535", entry, portText)
		}
		if err := checkHost(host); err != nil {
			return nil, fmt.Errorf("devices: %q: %v", entry, err)
		}
		if port != 0 {
			for _, b := range ports[port] {
				if b.host == host || anyHost(b.host) || anyHost(host) {
					return nil, fmt.Errorf("devices: %q: port %d is already taken by %q", entry, port, b.entry)
				}
			}
			ports[port] = append(ports[port], bound{entry, host})
		}
		eps = append(eps, Endpoint{Protocol: name, Addr: net.JoinHostPort(host, strconv.Itoa(port)), UDP: udp})
	}
	return eps, nil
}

// checkHost accepts "" (every interface), an IP address or a host name.
func checkHost(h string) error {
	if h == "" || net.ParseIP(h) != nil {
		return nil
	}
	if len(h) > 253 {
		return fmt.Errorf("the host %q is too long", h)
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("the host %q is not an IP address or a host name", h)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("the host %q is not an IP address or a host name", h)
			}
		}
	}
	return nil
}

// anyHost reports whether h listens on every interface.
func anyHost(h string) bool {
	if h == "" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}
