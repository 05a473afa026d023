package devicetest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// Every stream device is a Device.
var _ = []Device{(*Teltonika)(nil), (*GT06)(nil), (*H02)(nil), (*Queclink)(nil), (*GPS103)(nil)}

// The captures these tests rebuild are fleetdevice's corpus
// (../PROTOCOL/testdata/corpus.jsonl, whose README gives their source and
// licence).

type row struct {
	Transport string `json:"transport"`
	RawHex    string `json:"raw_hex"`
	RawText   string `json:"raw_text"`
	HTTP      *struct {
		Query   string            `json:"query"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	} `json:"http"`
	Expect struct {
		IMEI        *string `json:"imei"`
		Kind        string  `json:"kind"`
		MessageType string  `json:"message_type"`
		RecordCount int     `json:"record_count"`
		AckHex      *string `json:"ack_hex"`
		CRCOK       *bool   `json:"crc_ok"`
		Points      []struct {
			Lat        float64  `json:"lat"`
			Lon        float64  `json:"lon"`
			Time       string   `json:"time"`
			SpeedKmh   *float64 `json:"speed_kmh"`
			SpeedKnots *float64 `json:"speed_knots"`
			Course     *float64 `json:"course"`
			Altitude   *float64 `json:"altitude"`
			Valid      *bool    `json:"valid"`
			Satellites *int     `json:"satellites"`
			Offset     *int     `json:"device_local_utc_offset_min"`
		} `json:"points"`
	} `json:"expect"`
	Source string `json:"source"`
}

func (r row) raw(t *testing.T) []byte {
	t.Helper()
	if r.RawHex == "" {
		return []byte(r.RawText)
	}
	b, err := hex.DecodeString(r.RawHex)
	if err != nil {
		t.Fatalf("%s: %v", r.Source, err)
	}
	return b
}

// point is the row's i-th point as a Point.
func (r row) point(t *testing.T, i int) Point {
	t.Helper()
	w := r.Expect.Points[i]
	ts, err := time.Parse(time.RFC3339Nano, w.Time)
	if err != nil {
		t.Fatalf("%s: %v", r.Source, err)
	}
	p := Point{Time: ts, Latitude: w.Lat, Longitude: w.Lon, Valid: true}
	if w.SpeedKmh != nil {
		p.Speed = *w.SpeedKmh
	}
	if w.SpeedKnots != nil {
		p.Speed = *w.SpeedKnots * 1.852 // exactly what the device sent
	}
	if w.Course != nil {
		p.Heading = *w.Course
	}
	if w.Altitude != nil {
		p.Altitude = *w.Altitude
	}
	if w.Valid != nil {
		p.Valid = *w.Valid
	}
	if w.Satellites != nil {
		p.Satellites = *w.Satellites
	}
	return p
}

func corpus(t *testing.T, name string) []row {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", name, "testdata", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []row
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r row
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// ackOf is the row's acknowledgement.
func ackOf(t *testing.T, r row) []byte {
	t.Helper()
	if r.Expect.AckHex == nil {
		t.Fatalf("%s: no ack_hex", r.Source)
	}
	b, err := hex.DecodeString(*r.Expect.AckHex)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recognised reports whether e takes all of b as its answer.
func recognised(e Expect, b []byte) bool {
	n, err := e(b)
	return err == nil && n == len(b)
}

// The IMEI handshake rebuilds the captures, and 01 is its answer.
func TestTeltonikaHello(t *testing.T) {
	is := is.New(t)
	n := 0
	for _, r := range corpus(t, "teltonika") {
		if r.Expect.Kind != "login" {
			continue
		}
		d := &Teltonika{IMEI: *r.Expect.IMEI}
		hello, want := d.Hello()
		is.Equal(hello, r.raw(t))
		is.True(recognised(want, ackOf(t, r)))
		is.True(!recognised(want, []byte{0}))
		is.True(recognised(d.Refused(), []byte{0}))
		n++
	}
	is.True(n > 0)
}

// Codec 8 frames, I/O elements included, rebuild the captures byte for
// byte; the I/O elements are read from the captures' hex.
func TestTeltonikaCodec8RebuildsCaptures(t *testing.T) {
	is := is.New(t)
	ios := map[string][]TeltonikaIO{
		// TeltonikaProtocolDecoderTest.java:90
		"0000000000000035080100000161f37c50500020de5ba60ef11450000000000000000006040100b300b400ef000109002000014e0000000000000000010000be52": {
			{ID: 0x01, Size: 1}, {ID: 0xb3, Size: 1}, {ID: 0xb4, Size: 1}, {ID: 0xef, Size: 1},
			{ID: 0x09, Size: 2, Value: 0x0020}, {ID: 0x4e, Size: 8},
		},
		// TeltonikaProtocolDecoderTest.java:132
		"000000000000002b080100000140d4e3ec6e000cc661d01674a5e0fffc00000900000004020100f0000242322318000000000100007a04": {
			{ID: 0x01, Size: 1}, {ID: 0xf0, Size: 1},
			{ID: 0x42, Size: 2, Value: 0x3223}, {ID: 0x18, Size: 2},
		},
	}
	d := &Teltonika{}
	n := 0
	for _, r := range corpus(t, "teltonika") {
		io, ok := ios[r.RawHex]
		if !ok {
			continue
		}
		rec := TeltonikaRecord{Point: r.point(t, 0), IO: io}
		is.Equal(hex.EncodeToString(d.Codec8([]TeltonikaRecord{rec})), r.RawHex) // rebuilt
		is.True(recognised(d.Ack(1), ackOf(t, r)))
		n++
	}
	is.Equal(n, len(ios))
}

// Every Codec 8, 8E and 16 capture's CRC-16/IBM is what CRC16IBM
// computes, except the captures marked as failing theirs; the length
// field counts the data, and the acknowledgement is the record count.
func TestTeltonikaCRC(t *testing.T) {
	is := is.New(t)
	d := &Teltonika{}
	n := 0
	for _, r := range corpus(t, "teltonika") {
		b := r.raw(t)
		if r.Transport != "tcp" || len(b) < 12 || binary.BigEndian.Uint32(b) != 0 {
			continue
		}
		data := b[8 : len(b)-4]
		is.Equal(int(binary.BigEndian.Uint32(b[4:])), len(data))
		crc := binary.BigEndian.Uint32(b[len(b)-4:])
		is.Equal(crc == uint32(CRC16IBM(data)), r.Expect.CRCOK == nil || *r.Expect.CRCOK) // the CRC verifies where the capture's does
		is.True(recognised(d.Ack(r.Expect.RecordCount), ackOf(t, r)))
		n++
	}
	is.True(n > 10)
}

// The UDP form rebuilds the capture, and its acknowledgement echoes the
// packet ids.
func TestTeltonikaDatagramRebuildsTheCapture(t *testing.T) {
	is := is.New(t)
	n := 0
	for _, r := range corpus(t, "teltonika") {
		if r.Transport != "udp" {
			continue
		}
		d := &Teltonika{IMEI: *r.Expect.IMEI}
		rec := TeltonikaRecord{Point: r.point(t, 0), IO: []TeltonikaIO{ // from the capture's hex
			{ID: 0x01, Size: 1}, {ID: 0x02, Size: 1}, {ID: 0xf0, Size: 1, Value: 1}, {ID: 0xc8, Size: 1},
			{ID: 0x42, Size: 2, Value: 0x381c}, {ID: 0x18, Size: 2, Value: 0x0032},
			{ID: 0xc7, Size: 4, Value: 0xe1},
		}}
		is.Equal(hex.EncodeToString(d.Datagram(0xcafe, 0x22, []TeltonikaRecord{rec})), r.RawHex)
		is.True(recognised(d.DatagramAck(0xcafe, 0x22, 1), ackOf(t, r)))
		n++
	}
	is.Equal(n, 1)
}

// GT06 logins and locations rebuild the captures; every capture's CRC is
// what CRCITU computes, and its acknowledgement what GT06Ack builds.
func TestGT06RebuildsCaptures(t *testing.T) {
	is := is.New(t)
	logins, locations := 0, 0
	for _, r := range corpus(t, "gt06") {
		b := r.raw(t)
		typ := b[3]
		serial := binary.BigEndian.Uint16(b[len(b)-6:])
		is.Equal(binary.BigEndian.Uint16(b[len(b)-4:]), CRCITU(b[2:len(b)-4])) // the capture's CRC
		is.Equal(GT06Ack(typ, serial), ackOf(t, r))                            // its acknowledgement

		switch {
		case typ == GT06Login:
			d := &GT06{IMEI: *r.Expect.IMEI, Serial: serial}
			if len(b) > 18 { // with the terminal type and time zone
				d.HasOffset, d.TypeID = true, binary.BigEndian.Uint16(b[12:])
			}
			hello, want := d.Hello()
			is.Equal(hex.EncodeToString(hello), r.RawHex)
			is.True(recognised(want, ackOf(t, r)))
			is.Equal(d.Serial, serial+1)
			logins++
		case typ == GT06Location && b[2] == 0x1f: // the plain form: GPS and cell, nothing after
			d := &GT06{Serial: serial, Cell: GT06Cell{MCC: 246, MNC: 1, LAC: 0x6e, CellID: 0x55da}, HasACC: true}
			p := r.point(t, 0)
			p.Latitude = 0x05e51e78 / 1_800_000.0 // the capture's exact value: the row's is rounded to 6 decimals
			frame, want := d.Position(p)
			is.Equal(hex.EncodeToString(frame), r.RawHex)
			is.True(recognised(want, ackOf(t, r)))
			locations++
		}
	}
	is.Equal(logins, 4)
	is.Equal(locations, 1)
}

// A login with a time zone carries it in hours and minutes, west marked;
// the location's time is then the device's local time.
func TestGT06TimeZone(t *testing.T) {
	is := is.New(t)
	d := &GT06{IMEI: "123456789012345", HasOffset: true, Offset: -(5*time.Hour + 30*time.Minute)}
	hello, _ := d.Hello()
	is.Equal(hex.EncodeToString(hello[14:16]), "2128") // 530 << 4, west
	frame, _ := d.Position(Point{Time: time.Date(2026, 5, 1, 3, 0, 0, 0, time.UTC), Latitude: -1, Longitude: -2, Valid: true})
	is.Equal(frame[4:10], []byte{26, 4, 30, 21, 30, 0}) // 2026-04-30 21:30 local
	flags := binary.BigEndian.Uint16(frame[20:])
	is.Equal(flags&(1<<10), uint16(0)) // south
	is.True(flags&(1<<11) != 0)        // west
	is.True(flags&(1<<12) != 0)        // fixed
	is.Equal(d.Serial, uint16(2))
}

// H02's heartbeat rebuilds the capture and is echoed; a V1 sentence
// rebuilds the capture whose numbers have the encoder's widths, and the
// others field by field.
func TestH02(t *testing.T) {
	is := is.New(t)
	n := 0
	for _, r := range corpus(t, "h02") {
		raw := string(r.raw(t))
		switch {
		case strings.HasSuffix(raw, ",HTBT#"):
			d := &H02{ID: *r.Expect.IMEI}
			hb, want := d.Heartbeat()
			is.Equal(string(hb), raw)
			is.True(recognised(want, hb))
		case strings.HasPrefix(raw, "*HQ,") && strings.Contains(raw, ",V1,"):
			f := strings.Split(strings.TrimSuffix(raw, "#"), ",")
			d := &H02{ID: f[1], Status: f[12]}
			got := d.Sentence(r.point(t, 0))
			if raw == "*HQ,2705171109,V1,213324,A,5002.5849,N,01433.7822,E,0.00,000,140613,FFFFFFFF#" {
				is.Equal(got, raw) // rebuilt
			}
			g := strings.Split(strings.TrimSuffix(got, "#"), ",")
			is.Equal(g[3], f[3]) // time
			if f[4] != "" {
				is.Equal(g[4], f[4]) // validity
			}
			sameNumber(t, g[5], f[5], 1e-4) // latitude
			is.Equal(g[6], f[6])
			sameNumber(t, g[7], f[7], 1e-4) // longitude
			is.Equal(g[8], f[8])
			sameNumber(t, g[9], f[9], 0.005)              // knots
			sameNumber(t, g[10], f[10], 0.5)              // course
			is.True(strings.Contains(raw, ","+g[11]+",")) // the date
			n++
		}
	}
	is.Equal(n, 6)
	_, ack := (&H02{}).Report(nil)
	is.True(ack == nil) // positions are not acknowledged
}

// GPS103's handshake rebuilds the capture and is answered LOAD; reports
// match the captures field by field, the local time by the capture's
// offset.
func TestGPS103(t *testing.T) {
	is := is.New(t)
	n := 0
	for _, r := range corpus(t, "gps103") {
		raw := string(r.raw(t))
		switch {
		case strings.HasPrefix(raw, "##,"):
			d := &GPS103{IMEI: *r.Expect.IMEI}
			hello, want := d.Hello()
			is.Equal(string(hello), raw)
			is.True(recognised(want, []byte("LOAD")))
		case strings.Contains(raw, ",F,") && len(r.Expect.Points) == 1:
			w := r.Expect.Points[0]
			d := &GPS103{IMEI: *r.Expect.IMEI, Offset: time.Duration(*w.Offset) * time.Minute}
			f := strings.Split(strings.TrimSuffix(raw, ";"), ",")
			g := strings.Split(strings.TrimSuffix(d.Sentence(r.point(t, 0)), ";"), ",")
			is.Equal(g[0], f[0])              // imei
			is.Equal(g[2], f[2][:10])         // local yymmddHHMM
			is.Equal(g[5][:6], f[5][:6])      // UTC hhmmss
			is.Equal(g[6], f[6])              // validity
			sameNumber(t, g[7], f[7], 1e-4)   // latitude
			is.Equal(g[8], f[8])              //
			sameNumber(t, g[9], f[9], 1e-4)   // longitude
			is.Equal(g[10], f[10])            //
			sameNumber(t, g[11], f[11], 0.01) // knots
			if len(f) > 12 && f[12] != "" {
				sameNumber(t, g[12], f[12], 0.01) // course
			}
			n++
		}
	}
	is.True(n >= 8)
	hb, want := (&GPS103{IMEI: "359586015829802"}).Heartbeat()
	is.Equal(string(hb), "359586015829802;")
	is.True(recognised(want, []byte("ON")))
}

// Queclink's fixed-interval reports carry the position block of the
// captures (speed, azimuth, altitude, longitude, latitude, UTC time) with
// the same values; a heartbeat is answered with the version and count.
func TestQueclink(t *testing.T) {
	is := is.New(t)
	n := 0
	for _, r := range corpus(t, "queclink") {
		raw := string(r.raw(t))
		if !strings.HasPrefix(raw, "+RESP:GTFRI,") || len(r.Expect.Points) != 1 {
			continue
		}
		p := r.point(t, 0)
		when := p.Time.UTC().Format("20060102150405")
		f := strings.Split(raw, ",")
		i := indexOf(f, when)
		if i < 5 {
			t.Fatalf("%s: no position block", r.Source)
		}
		d := &Queclink{IMEI: f[2]}
		g := strings.Split(d.FRI(p), ",")
		j := indexOf(g, when)
		is.Equal(g[2], f[2]) // imei
		for k := 1; k <= 5; k++ {
			sameNumber(t, g[j-k], f[i-k], 0.05)
		}
		n++
	}
	is.True(n >= 5)

	d := &Queclink{IMEI: "135790246811220", Version: "1A0401", Count: 0x11F0, Now: func() time.Time { return time.Date(2010, 2, 14, 9, 32, 54, 0, time.UTC) }}
	hb, want := d.Heartbeat()
	is.Equal(string(hb), "+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$") // Gl200TextProtocolDecoderTest.java:589
	is.True(recognised(want, []byte("+SACK:GTHBD,1A0401,11F0$")))
	is.Equal(d.Count, uint16(0x11F1))
}

// OsmAnd's query carries the values of the captures under the same
// names and units; the JSON form's coordinates, speed (m/s), heading and
// altitude are the capture's.
func TestOsmAnd(t *testing.T) {
	is := is.New(t)
	queries, bodies := 0, 0
	for _, r := range corpus(t, "osmand") {
		if r.HTTP == nil || r.Expect.IMEI == nil || len(r.Expect.Points) != 1 || r.Expect.Points[0].Time == "" {
			continue
		}
		p := r.point(t, 0)
		if r.HTTP.Query != "" {
			want, err := url.ParseQuery(r.HTTP.Query)
			is.NoErr(err)
			if want.Get("lat") == "" || want.Get("id") == "" {
				continue
			}
			got, err := url.ParseQuery(OsmAndQuery(*r.Expect.IMEI, p))
			is.NoErr(err)
			for k := range got {
				if k != "id" && want.Get(k) != "" {
					sameNumber(t, got.Get(k), want.Get(k), 1e-9)
				}
			}
			is.Equal(got.Get("id"), want.Get("id"))
			queries++
		}
		if strings.HasPrefix(r.HTTP.Headers["Content-Type"], "application/json") {
			var want, got struct {
				DeviceID string `json:"device_id"`
				Location struct {
					Timestamp string             `json:"timestamp"`
					Coords    map[string]float64 `json:"coords"`
				} `json:"location"`
			}
			is.NoErr(json.Unmarshal([]byte(r.HTTP.Body), &want))
			is.NoErr(json.Unmarshal(OsmAndJSON(*r.Expect.IMEI, p), &got))
			is.Equal(got.DeviceID, want.DeviceID)
			is.Equal(got.Location.Timestamp, want.Location.Timestamp)
			for _, k := range []string{"latitude", "longitude", "altitude"} {
				is.True(math.Abs(got.Location.Coords[k]-want.Location.Coords[k]) < 1e-9)
			}
			if want.Location.Coords["speed"] >= 0 && r.Expect.Points[0].SpeedKmh != nil {
				is.True(math.Abs(got.Location.Coords["speed"]-want.Location.Coords["speed"]) < 1e-9)
			}
			bodies++
		}
	}
	is.True(queries >= 2)
	is.True(bodies >= 1)
	is.Equal(OsmAndURL("http://h:5055", "a b", Point{Time: time.Unix(1377177267, 0)}),
		"http://h:5055/?id=a+b&timestamp=1377177267&lat=0&lon=0&speed=0&bearing=0&altitude=0&valid=false")
}

// Read returns exactly the answer expected, and refuses another.
func TestRead(t *testing.T) {
	is := is.New(t)
	d := &GT06{IMEI: "123456789012345"}
	pts := []Point{{Time: time.Unix(1777636800, 0), Valid: true}, {Time: time.Unix(1777636810, 0), Valid: true}}
	_, want := d.Report(pts)
	answer := append(GT06Ack(GT06Location, 0), GT06Ack(GT06Location, 1)...)
	rd := bufio.NewReader(bytes.NewReader(append(answer, "next"...)))
	got, err := Read(rd, want)
	is.NoErr(err)
	is.Equal(got, answer)
	rest, _ := rd.Peek(4)
	is.Equal(string(rest), "next") // nothing read beyond the answer

	_, err = Read(bufio.NewReader(bytes.NewReader(GT06Ack(GT06Location, 7))), want)
	is.True(errors.Is(err, ErrUnexpected))
	_, err = Read(bufio.NewReader(bytes.NewReader(answer[:5])), want)
	is.True(err != nil) // the answer did not come whole
}

func indexOf(f []string, s string) int {
	for i, v := range f {
		if v == s {
			return i
		}
	}
	return -1
}

// sameNumber fails unless a and b are numbers within tol of each other.
func sameNumber(t *testing.T, a, b string, tol float64) {
	t.Helper()
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil || math.Abs(x-y) > tol {
		t.Errorf("%q and %q differ", a, b)
	}
}

// Every stream device answers commands.
var _ = []Commanded{(*Teltonika)(nil), (*GT06)(nil), (*H02)(nil), (*Queclink)(nil), (*GPS103)(nil)}

// A simulated device reads only its protocol's commands: another's bytes,
// a frame cut short or a bad CRC are ErrUnexpected, never an answer.
func TestSimulatorsReadOnlyCommands(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC) }
	tk := "00000000000000130c01050000000b7365746469676f7574203101000087a2" // setdigout 1
	gt := "787815800f000000014459442c30303030303023000189a70d0a"           // DYD,000000#, flag 1
	for _, c := range []struct {
		dev       Commanded
		good, bad []byte
		answer    string
	}{
		{&Teltonika{IMEI: "356307042441013"}, mustHex(t, tk), mustHex(t, tk[:len(tk)-2]+"00"), "DOUT1:1"},
		{&GT06{IMEI: "356307042441013"}, mustHex(t, gt), mustHex(t, gt[:len(gt)-8]+"00000d0a"), "DYD=Success!"},
		{&H02{ID: "4210209006"}, []byte("*HQ,4210209006,S20,010203,1,1#"), []byte("*HQ,4210209007,S20,010203,1,1#"), "V4,S20,DONE,010203,"},
		{&GPS103{IMEI: "359710045559474"}, []byte("**,imei:359710045559474,J;"), []byte("##,imei:359710045559474,J;"), ",jt,"},
		{&Queclink{IMEI: "860599000773978", Now: now}, []byte("AT+GTRTO=gl300,8,,,,,,002A$"), []byte("AT+GTRTO$"), "+ACK:GTRTO,270A04,860599000773978,,VER,002A,20261126120000,0000$"},
	} {
		is := is.New(t)
		got, err := Read(bufio.NewReader(bytes.NewReader(append(c.good, "rest"...))), c.dev.Command)
		is.NoErr(err)
		is.Equal(got, c.good) // all of the command, nothing after it
		answer, err := c.dev.Answer(c.good)
		is.NoErr(err)
		is.True(bytes.Contains(answer, []byte(c.answer)))
		_, err = c.dev.Answer(c.bad)
		is.True(errors.Is(err, ErrUnexpected))
		_, err = c.dev.Command([]byte("garbage"))
		is.True(errors.Is(err, ErrUnexpected))
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
