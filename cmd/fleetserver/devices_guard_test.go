package main

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devicetest"
	"github.com/matryer/is"
)

// Datagrams naming unknown IMEIs, sent from a tracker's address (their
// source can be forged), do not lock that tracker out: its TCP login is
// answered 01, and its own datagrams acknowledged (API.md §13).
func TestServeDevicesForgedDatagramsLockNoTrackerOut(t *testing.T) {
	is := is.New(t)
	bin := serverBinary(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	key := newAccount(t, bin, dsn)
	srv := startDevChild(t, bin, dsn, "--devices", "teltonika=127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	tcpAddr := srv.deviceAddr(t, "teltonika", "tcp")
	metrics := srv.line(t, regexp.MustCompile(`^metrics on (http://\S+)`))
	client := &http.Client{Timeout: 30 * time.Second}
	vehicleWithDevice(t, client, srv.base, key, "Truck 7", "356307042441013")

	udpAddr, err := net.ResolveUDPAddr("udp", tcpAddr) // the datagram form on the same port
	is.NoErr(err)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	is.NoErr(err)
	defer pc.Close()
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	pt := devicetest.TeltonikaRecord{Point: devicetest.Point{Time: at, Latitude: 54.6872, Longitude: 25.2797, Valid: true}}
	const forged = 8
	for i := range forged {
		d := devicetest.Teltonika{IMEI: "35630704244110" + strconv.Itoa(i)}
		_, err := pc.WriteTo(d.Datagram(uint16(i), 1, []devicetest.TeltonikaRecord{pt}), udpAddr)
		is.NoErr(err)
	}
	// Wait until the server has refused them all.
	refused := regexp.MustCompile(`fleet_device_refusals_total\{reason="(?:unknown|braked)"\} (\d+)`)
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, err := client.Get(metrics)
		is.NoErr(err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		n := 0
		for _, m := range refused.FindAllStringSubmatch(string(b), -1) {
			k, _ := strconv.Atoi(m[1])
			n += k
		}
		if n == forged {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d datagrams refused:\n%s", n, forged, grepLines(string(b), "refusals"))
		}
	}

	tc, ans, err := dialTeltonika(tcpAddr, "356307042441013")
	is.NoErr(err)
	defer tc.c.Close()
	is.Equal(ans, []byte{0x01}) // the tracker's login, from the same address
	ack, err := tc.report(devicetest.Point{Time: at, Latitude: 54.6872, Longitude: 25.2797, Valid: true})
	is.NoErr(err)
	is.Equal(ack, []byte{0x00, 0x00, 0x00, 0x01})

	d := devicetest.Teltonika{IMEI: "356307042441013"}
	pt.Time = at.Add(time.Second)
	_, err = pc.WriteTo(d.Datagram(77, 1, []devicetest.TeltonikaRecord{pt}), udpAddr)
	is.NoErr(err)
	pc.SetReadDeadline(time.Now().Add(30 * time.Second)) // a guard against a hang only
	b := make([]byte, 64)
	n, _, err := pc.ReadFrom(b)
	is.NoErr(err)
	is.Equal(b[:n], []byte{0x00, 0x05, 0x00, 77, 0x01, 0x01, 0x01}) // its datagram acknowledged
}
