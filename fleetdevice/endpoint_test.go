package fleetdevice

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestParseEndpoints(t *testing.T) {
	all := func(host string) []Endpoint {
		j := func(port string) string {
			if strings.Contains(host, ":") {
				return "[" + host + "]:" + port
			}
			return host + ":" + port
		}
		return []Endpoint{
			{Protocol: "osmand", Addr: j("5055")},
			{Protocol: "teltonika", Addr: j("5027"), UDP: true},
			{Protocol: "gt06", Addr: j("5023")},
			{Protocol: "h02", Addr: j("5013"), UDP: true},
			{Protocol: "queclink", Addr: j("5004"), UDP: true},
			{Protocol: "gps103", Addr: j("5001")},
		}
	}
	for _, tc := range []struct {
		spec, host string
		want       []Endpoint
		err        string // a part of the error; "" for none
	}{
		{spec: "", host: "0.0.0.0", want: nil},
		{spec: "  ", host: "0.0.0.0", want: nil},
		{spec: "all", host: "0.0.0.0", want: all("0.0.0.0")},
		{spec: "all", host: "", want: all("")},
		{spec: "all", host: "127.0.0.1", want: all("127.0.0.1")},
		{spec: "all", host: "::1", want: all("::1")},
		{spec: "all", host: "fleet.example.com", want: all("fleet.example.com")},
		{spec: "Teltonika=0.0.0.0:5027, OsmAnd=0.0.0.0:5055", host: "127.0.0.1", want: []Endpoint{ // any case
			{Protocol: "teltonika", Addr: "0.0.0.0:5027", UDP: true},
			{Protocol: "osmand", Addr: "0.0.0.0:5055"},
		}},
		{spec: "teltonika=0.0.0.0:5027,osmand=0.0.0.0:5055", host: "127.0.0.1", want: []Endpoint{
			{Protocol: "teltonika", Addr: "0.0.0.0:5027", UDP: true},
			{Protocol: "osmand", Addr: "0.0.0.0:5055"},
		}},
		{spec: " gt06 = 10.0.0.5:6000 , gps103=:7000", want: []Endpoint{
			{Protocol: "gt06", Addr: "10.0.0.5:6000"},
			{Protocol: "gps103", Addr: ":7000"},
		}},
		{spec: "h02=[::1]:5013", want: []Endpoint{{Protocol: "h02", Addr: "[::1]:5013", UDP: true}}},
		{spec: "queclink=localhost:0,gt06=localhost:0", want: []Endpoint{ // port 0: the system picks each
			{Protocol: "queclink", Addr: "localhost:0", UDP: true},
			{Protocol: "gt06", Addr: "localhost:0"},
		}},
		{spec: "teltonika=10.0.0.1:5000,gt06=10.0.0.2:5000", want: []Endpoint{ // one port, two interfaces
			{Protocol: "teltonika", Addr: "10.0.0.1:5000", UDP: true},
			{Protocol: "gt06", Addr: "10.0.0.2:5000"},
		}},

		{spec: "tk103=0.0.0.0:5002", err: `unknown protocol "tk103" (known: osmand, teltonika, gt06, h02, queclink, gps103)`},
		{spec: "Tel7onika=0.0.0.0:5027", err: `unknown protocol "tel7onika"`},
		{spec: "teltonika", err: `"teltonika": want protocol=host:port, or all`},
		{spec: "=0.0.0.0:5027", err: `want protocol=host:port, or all`},
		{spec: "teltonika=5027", err: `the address "5027" is not host:port`},
		{spec: "teltonika=0.0.0.0", err: `the address "0.0.0.0" is not host:port`},
		{spec: "teltonika=0.0.0.0:", err: `the port "" is not a number from 0 to 65535`},
		{spec: "teltonika=0.0.0.0:65536", err: `the port "65536" is not a number`},
		{spec: "teltonika=0.0.0.0:-1", err: `the port "-1" is not a number`},
		{spec: "teltonika=0.0.0.0:+80", err: `the port "+80" is not a number`},
		{spec: "teltonika=0.0.0.0:http", err: `the port "http" is not a number`},
		{spec: "teltonika=bad_host:5027", err: `the host "bad_host" is not an IP address or a host name`},
		{spec: "teltonika=a..b:5027", err: `the host "a..b" is not an IP address or a host name`},
		{spec: "all", host: "a b", err: `the host of --addr "a b"`},
		{spec: "teltonika=:5027,teltonika=:5028", err: `teltonika is already served ("teltonika=:5027")`},
		{spec: "teltonika=:5027,gt06=127.0.0.1:5027", err: `port 5027 is already taken by "teltonika=:5027"`},
		{spec: "teltonika=127.0.0.1:5027,gt06=0.0.0.0:5027", err: `port 5027 is already taken`},
		{spec: "teltonika=127.0.0.1:5027,osmand=127.0.0.1:5027", err: `port 5027 is already taken`},
		{spec: "teltonika=:5027,", err: "an empty entry"},
		{spec: "all,teltonika=:5027", err: "all stands alone"},
		{spec: "teltonika=:5027,all", err: "all stands alone"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			is := is.New(t)
			got, err := ParseEndpoints(tc.spec, tc.host)
			if tc.err != "" {
				is.True(err != nil) // an error
				is.True(strings.Contains(err.Error(), tc.err))
				is.True(strings.HasPrefix(err.Error(), "devices: "))
				is.Equal(got, nil)
				return
			}
			is.NoErr(err)
			is.Equal(got, tc.want)
		})
	}
}

// An endpoint's decoder is the protocol it names; OsmAnd has none (it is
// the OsmAnd handler).
func TestEndpointDecoder(t *testing.T) {
	is := is.New(t)
	eps, err := ParseEndpoints("all", "")
	is.NoErr(err)
	is.Equal(len(eps), len(ProtocolNames()))
	for _, e := range eps {
		if e.Protocol == OsmAndName {
			is.Equal(e.Decoder(), nil)
			continue
		}
		is.Equal(e.Decoder().Name(), e.Protocol)
		p, _ := ProtocolNamed(e.Protocol)
		is.Equal(p.Serves(UDP), e.UDP)
	}
}
