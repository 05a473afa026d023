package h02

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
	"github.com/matryer/is"
)

func h02Decode(t *testing.T, frame []byte, now time.Time) (devproto.Message, error) {
	t.Helper()
	var m devproto.Message
	s := devproto.Session{Transport: devproto.TCP, Now: now}
	err := Decoder{}.Decode(frame, &s, &m)
	if err == nil {
		prototest.CheckDecoded(t, m)
	}
	return m, err
}

func h02Hex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestH02Corpus(t *testing.T) {
	rows := prototest.LoadCorpus(t)
	raws := prototest.RawRows(t)
	for i, row := range rows {
		is := is.NewRelaxed(t)
		raw := row.Raw(t)
		n, err := Decoder{}.Split(raw)
		is.NoErr(err)         // a frame of the protocol
		is.Equal(n, len(raw)) // the whole row is one frame
		m, err := h02Decode(t, raw, prototest.Now)
		if err != nil {
			t.Errorf("%s: %v", row.Source, err)
			continue
		}
		prototest.CheckRow(t, row, m)

		expect := raws[i]["expect"].(map[string]any)
		switch {
		case expect["msg_type"] == "V1" && row.Expect.IMEI != nil:
			want := "*HQ," + *row.Expect.IMEI + ",V4,V1,20261126120000#"
			if string(m.Reply) != want {
				t.Errorf("%s: reply %q, want %q", row.Source, m.Reply, want)
			}
		case row.Expect.AckText == nil && len(m.Reply) != 0:
			t.Errorf("%s: reply %q, want none", row.Source, m.Reply)
		}
		for j, p := range prototest.RawPoints(raws[i]) {
			if h, ok := p["status_hex"].(string); ok && j < len(m.Positions) {
				want, _ := strconv.ParseUint(h, 16, 32)
				got, _ := prototest.Attr(m.Positions[j], "status")
				if got != float64(want) {
					t.Errorf("%s: status %v, want %s", row.Source, got, h)
				}
				// The ignition is the word's bit 10 (API.md §14).
				prototest.CheckAttrs(t, row.Source, map[string]any{"ignition": want&(1<<10) != 0}, m.Positions[j])
			}
		}
	}
}

func TestH02V1ReplyCarriesTheServerClock(t *testing.T) {
	is := is.New(t)
	now := time.Date(2024, 2, 29, 23, 59, 58, 0, time.FixedZone("X", 3*3600))
	m, err := h02Decode(t, []byte("*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF#"), now)
	is.NoErr(err)
	is.Equal(string(m.Reply), "*HQ,4210051415,V4,V1,20240229205958#") // the clock in UTC
	is.Equal(m.Kind, devproto.KindPositions)

	// Other types are not acknowledged; a V1 without an identifier cannot be.
	for _, frame := range []string{
		"*HQ,9180271064,V5,091233,V,2348.8912,N,09021.3302,E,000.00,000,051219,FFFFBBFF#",
		"*HQ,,V1,173212,A,2225.78879,S,02829.19021,E,0.00,0,290418,FFFFFBFF#",
	} {
		m, err := h02Decode(t, []byte(frame), now)
		is.NoErr(err)
		is.Equal(len(m.Positions), 1)
		is.Equal(len(m.Reply), 0) // no reply
	}
}

func TestH02HeartbeatsAreEchoed(t *testing.T) {
	is := is.New(t)
	for frame, reply := range map[string]string{
		"*HQ,135790246811220,HTBT#":     "*HQ,135790246811220,HTBT#",
		"*HQ,135790246811220,HTBT,100#": "*HQ,135790246811220,HTBT#",
		"*HQ,4210051415,V0,120000#":     "*HQ,4210051415,V0#",
	} {
		m, err := h02Decode(t, []byte(frame), prototest.Now)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindHeartbeat)
		is.Equal(string(m.Reply), reply)
		is.Equal(len(m.Positions), 0)
		is.True(m.Identifier != "")
	}
}

func TestH02CoordinateSpellings(t *testing.T) {
	for _, c := range []struct {
		name, frame string
		lat, lon    float64
	}{
		// Traccar's tests assert the first two (to 5 decimals).
		{"dashes", "*HQ,1451316409,V1,030149,A,-23-29.0095,S,-46-51.5852,W,2.4,065,070315,FFFFFFFF#", -23.48349, -46.85975},
		{"leading zeros dropped", "*HQ,9001000002,V8,213945,A,3542.2043,N,38.6508,W,0.00,170,221025,FBFFF9FF,0,0,0,0,22,31,126,0#", 35.70340, -0.64418},
		{"DDMMmmmm", "*HQ,5905101893,V1,105759,A,37573392,S,145037022,E,000.00,173,280122,FF7FFBFF,,,9059e2c,8232,4#", -(37 + 57.3392/60), 145 + 3.7022/60},
		{"three-digit degrees", "*HQ,354188045498669,V1,195200,A,701.8915,S,3450.3399,W,0.00,205.70,050213,ffffffff#", -(7 + 1.8915/60), -(34 + 50.3399/60)},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			m, err := h02Decode(t, []byte(c.frame), prototest.Now)
			is.NoErr(err)
			is.Equal(len(m.Positions), 1)
			p := m.Positions[0]
			is.True(math.Abs(p.Latitude-c.lat) < 1e-5)
			is.True(math.Abs(p.Longitude-c.lon) < 1e-5)
		})
	}
}

func TestH02CommandResponseBeforeTheReport(t *testing.T) {
	is := is.New(t)
	m, err := h02Decode(t, []byte("*TH,2020916012,V4,S20,ERROR,130305,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,FFFFFBFF#"), prototest.Now)
	is.NoErr(err)
	is.Equal(m.Identifier, "2020916012")
	is.Equal(len(m.Positions), 1)
	p := m.Positions[0]
	is.Equal(p.Time, time.Date(2002, 9, 22, 5, 3, 16, 0, time.UTC)) // the report's time, not the command's
	is.True(math.Abs(p.Speed-14.28*1.852) < 1e-9)                   // knots to km/h
	r, _ := prototest.Attr(p, "result")
	is.Equal(r, "S20,ERROR,130305")
	is.Equal(len(m.Reply), 0)
}

func TestH02ReportWithoutDateTakesTheServerClock(t *testing.T) {
	is := is.New(t)
	m, err := h02Decode(t, []byte("*HQ,4209951296,V19,214452,A,5201.0178,N,01830.5029,E,000.00,000,200417,,195.63.13.195,89480610500392633029,BFFFFBFF#"), prototest.Now)
	is.NoErr(err)
	is.Equal(len(m.Positions), 1)
	is.Equal(m.Positions[0].Time, prototest.Now) // V19 puts SIM data where the date would be
}

func TestH02SentencesWithoutCoordinatesCarryNoPosition(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{
		"*HQ,353505510948929,V1,,V,,N,,E,0.00,0,,FFFFF7FF,f0,a,11a0,c0c6#",
		"*HQ,353588020068342,V1,000000,V,0.0000,0,0.0000,0,0.00,0.00,000000,ffffffff,000106,000002,000203,004c87,16#",
		"*HQ,4109179024,NBR,103732,722,310,0,6,8106,32010,23,8101,22007,25,100217,FFFFFBFF,5#",
		"*HQ,1700086468,LINK,180902,15,0,84,0,0,240517,FFFFFBFF#",
		"*HQ,4109198974,#",
		"*HQ,8401016597,BASE,152609,0,0,0,0,211014,FFFFFFFF#",
	} {
		m, err := h02Decode(t, []byte(frame), prototest.Now)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindOther)
		is.Equal(len(m.Positions), 0)
		is.Equal(len(m.Reply), 0)
	}
	m, _ := h02Decode(t, []byte("*HQ,1700086468,LINK,180902,15,0,84,0,0,240517,FFFFFBFF#"), prototest.Now)
	is.Equal(m.Identifier, "1700086468") // the device is known alive

	// A latitude of 91°: the report is answered, its position dropped.
	m, err := h02Decode(t, []byte("*HQ,1451316485,V1,121557,A,9123.3408,N,04802.8926,W,0.1,158,241115,FFFFFFFF#"), prototest.Now)
	is.NoErr(err)
	is.Equal(m.Kind, devproto.KindOther)
	is.Equal(len(m.Positions), 0)
}

func TestH02VP1(t *testing.T) {
	is := is.New(t)
	m, err := h02Decode(t, []byte("*hq,356327080425330,VP1,A,2702.7245,S,15251.9311,E,0.48,0.0000,080917#"), prototest.Now)
	is.NoErr(err)
	is.Equal(m.Identifier, "356327080425330")
	is.Equal(len(m.Positions), 1)
	p := m.Positions[0]
	is.True(math.Abs(p.Latitude+(27+2.7245/60)) < 1e-9)
	is.True(math.Abs(p.Longitude-(152+51.9311/60)) < 1e-9)
	is.Equal(p.Time, time.Date(2017, 9, 8, 0, 0, 0, 0, time.UTC))
	is.True(p.Valid)

	m, err = h02Decode(t, []byte("*hq,356327081001239,VP1,V,470,002,92,3565,0Y92,19433,30Y92,1340,29#"), prototest.Now)
	is.NoErr(err)
	is.Equal(len(m.Positions), 0) // cell towers only
}

func TestH02Binary(t *testing.T) {
	t.Run("32 bytes", func(t *testing.T) {
		is := is.New(t)
		m, err := h02Decode(t, h02Hex(t, "2441060116601245431311165035313006004318210e000000fffffbffff0024"), prototest.Now)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindPositions)
		is.Equal(m.Identifier, "4106011660")
		is.Equal(len(m.Positions), 1)
		p := m.Positions[0]
		is.Equal(p.Time, time.Date(2016, 11, 13, 12, 45, 43, 0, time.UTC))
		is.True(math.Abs(p.Latitude-(50+35.3130/60)) < 1e-9)
		is.True(math.Abs(p.Longitude-(4+31.821/60)) < 1e-9)
		is.True(p.Valid)
		b, _ := prototest.Attr(p, "battery_level")
		is.Equal(b, 100.0) // battery byte 6
		ign, _ := prototest.Attr(p, "ignition")
		is.Equal(ign, false) // status bit 10 clear
		is.Equal(len(m.Reply), 0)
	})
	t.Run("42 bytes: an IMEI", func(t *testing.T) {
		is := is.New(t)
		m, err := h02Decode(t, h02Hex(t, "2435248308419329301047591808172627335900074412294E024138FEFFFFFFFF01120064BA73005ECC"), prototest.Now)
		is.NoErr(err)
		is.Equal(m.Identifier, "352483084193293")
		p := m.Positions[0]
		is.Equal(p.Time, time.Date(2017, 8, 18, 10, 47, 59, 0, time.UTC))
		is.True(math.Abs(p.Latitude-(26+27.3359/60)) < 1e-9)
		is.True(math.Abs(p.Longitude-(74+41.2294/60)) < 1e-9)
		is.True(math.Abs(p.Speed-24*1.852) < 1e-9)
		is.Equal(p.Heading, 138.0)
	})
	t.Run("flags", func(t *testing.T) {
		is := is.New(t)
		// The corpus's frame west of Greenwich and without a fix (flags 0x0).
		m, err := h02Decode(t, h02Hex(t, "24702802061601234020031910125482600612695044000000ffffbbff000000000000000001760d04e2c9934d"), prototest.Now)
		is.NoErr(err)
		p := m.Positions[0]
		is.True(!p.Valid)
		is.True(p.Latitude > 0) // 0x4: north
		is.True(p.Longitude < 0)
	})
	t.Run("not BCD", func(t *testing.T) {
		is := is.New(t)
		_, err := h02Decode(t, h02Hex(t, "24410601166012454313111650353130060043182a0e000000fffffbffff0024"), prototest.Now)
		is.True(errors.Is(err, devproto.ErrGarbage))
		_, err = h02Decode(t, h02Hex(t, "244106011660124543"), prototest.Now)
		is.True(errors.Is(err, devproto.ErrGarbage)) // too short
	})
}

func TestH02DecodeRefusesGarbage(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{
		"",
		"GET / HTTP/1.1",
		"*HQ,4210051415,V1,164549\x00,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF#",
		"*HQ,4210051415,V1,164549,A",
	} {
		_, err := h02Decode(t, []byte(frame), prototest.Now)
		is.True(errors.Is(err, devproto.ErrGarbage)) // not H02
	}
}

func TestH02Datagram(t *testing.T) {
	is := is.New(t)
	var m devproto.Message
	s := devproto.Session{Transport: devproto.UDP, Now: prototest.Now}
	err := Decoder{}.Decode([]byte("*HQ,2705171109,V1,213324,A,5002.5849,N,01433.7822,E,0.00,000,140613,FFFFFFFF#\r\n"), &s, &m)
	is.NoErr(err)
	is.Equal(len(m.Positions), 1)
	is.Equal(string(m.Reply), "*HQ,2705171109,V4,V1,20261126120000#")
}

func TestH02Split(t *testing.T) {
	text1 := []byte("*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF,712,01,0,0,6#")
	text2 := []byte("*HQ,135790246811220,HTBT#")
	sms := []byte("*HQ,5226073533,SMS,ID:5226073533\nIP:1.2.3.4 5013\nGSM:26#")
	bin32 := h02Hex(t, "2441060116601245431311165035313006004318210e000000fffffbffff0024")
	x32 := h02Hex(t, "5800009814991024031101175540227006012321670c000095fffffbffff0033")
	bin45 := h02Hex(t, "24410600082621532131081504419390060740418306000000fffffbfdff0015060000002c02dc0c000000001f")
	bin42 := h02Hex(t, "2435248308419329301047591808172627335900074412294E024138FEFFFFFFFF01120064BA73005ECC")

	t.Run("streams", func(t *testing.T) {
		prototest.CheckStream(t, Decoder{}, [][]byte{text1, bin32, text2, x32, sms, bin32, text1})
	})
	t.Run("long binary frames delivered whole", func(t *testing.T) {
		is := is.New(t)
		for _, c := range []struct {
			buf  []byte
			want int
		}{
			{bin45, 45},
			{append(append([]byte{}, bin45...), text1...), 45},
			{append(append([]byte{}, bin45...), bin45...), 45},
			{append(append([]byte{}, bin45...), bin32...), 45},
			{bin42, 42},
			{append(append([]byte{}, bin42...), text2...), 42},
			{append(append([]byte{}, bin32...), bin45...), 32},
			{append(append([]byte("\r\n"), bin32...), '\r'), 34},
		} {
			n, err := Decoder{}.Split(c.buf)
			is.NoErr(err)
			is.Equal(n, c.want)
		}
		for _, n := range []int{33, 40, 43, 44} {
			k, err := Decoder{}.Split(bin45[:n])
			is.NoErr(err)
			is.Equal(k, 0) // a binary frame longer than 32 bytes is not whole yet
		}
		k, err := Decoder{}.Split(append(append([]byte{}, bin45[:42]...), '*', 0)) // a start byte where a 42-byte frame would end
		is.NoErr(err)
		is.Equal(k, 0)
	})
	t.Run("garbage", func(t *testing.T) {
		is := is.New(t)
		prototest.CheckGarbage(t, Decoder{}, []byte("GET / HTTP/1.1\r\n"))
		prototest.CheckGarbage(t, Decoder{}, []byte("\r\n hello"))
		prototest.CheckGarbage(t, Decoder{}, []byte("*HQ,4210051415,V1,\x01164549#"))
		prototest.CheckGarbage(t, Decoder{}, append([]byte("*HQ,"), bytes.Repeat([]byte("1"), 2048)...))
		prototest.CheckGarbage(t, Decoder{}, bytes.Repeat([]byte("\r\n"), 1024))
		n, err := Decoder{}.Split(append([]byte("*HQ,"), bytes.Repeat([]byte("1"), 2000)...))
		is.NoErr(err)
		is.Equal(n, 0) // within the bound: not whole yet
		n, err = Decoder{}.Split([]byte("\r\n\r\n"))
		is.NoErr(err)
		is.Equal(n, 0) // line ends alone: wait for a frame
	})
}

func FuzzH02(f *testing.F) {
	prototest.FuzzProtocol(f, Decoder{},
		[]byte("*HQ,5905101893,V1,105759,A,37573392,S,145037022,E,000.00,173,280122,FF7FFBFF,,,9059e2c,8232,4#"),
		[]byte("*HQ,1451316409,V1,030149,A,-23-29.0095,S,-46-51.5852,W,2.4,065,070315,FFFFFFFF#"),
		[]byte("*hq,356327080425330,VP1,A,2702.7245,S,15251.9311,E,0.48,0.0000,080917#"),
		[]byte("*HQ,4210051415,V0,120000#"),
		[]byte("*TH,2020916012,V4,S20,DONE,130305,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,F7FFFBFF#"), // an answer
		h02Hex(f, "2435248308419329301047591808172627335900074412294E024138FEFFFFFFFF01120064BA73005ECC"),
	)
}

var h02Bench = []byte("*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF,712,01,0,0,6#")

func BenchmarkH02Decode(b *testing.B) { prototest.BenchmarkDecode(b, Decoder{}, h02Bench) }

func BenchmarkH02DecodeBinary(b *testing.B) {
	prototest.BenchmarkDecode(b, Decoder{}, h02Hex(b, "2441060116601245431311165035313006004318210e000000fffffbffff0024"))
}

func BenchmarkH02Ratio(b *testing.B) { prototest.BenchmarkTextRatio(b, Decoder{}, h02Bench) }

// TestTelematicsRows decodes every row of testdata/telematics.jsonl and
// compares the attributes of the position it names with the row's
// (prototest.CheckTelematicsRows).
func TestTelematicsRows(t *testing.T) {
	prototest.CheckTelematicsRows(t, "h02", func(t *testing.T, row prototest.TelematicsRow) (string, []devproto.Message) {
		return prototest.DecodeTelematics(t, Decoder{}, row)
	})
}

// TestEveryAttributeIsOneTheAPIAccepts decodes everything the tests hold
// (prototest.EveryAttribute) and checks every attribute the decoder
// produced. The fuzz target checks the same of arbitrary input.
func TestEveryAttributeIsOneTheAPIAccepts(t *testing.T) {
	names := prototest.EveryAttribute(t, Decoder{})
	names.Want(t, "alarm", "battery_level", "ignition")
}

// TestImpossibleDatesAreNoFix: a date or time that cannot exist (day 32,
// month 0 or 13, 29 February of a common year, hour 25, minute or second
// 60 and past) is a position without a fix, at no time: never rolled over
// into another time (API.md §13). Each frame is first decoded as sent,
// then with its date or time made impossible (prototest.CheckImpossibleDates).
func TestImpossibleDatesAreNoFix(t *testing.T) {
	h02Bin := "2441060116601245431311165035313006004318210e000000fffffbffff0024" // 12:45:43 13/11/16
	prototest.CheckImpossibleDates(t, Decoder{}, []prototest.DateCase{
		{
			Name:  "h02 text",
			Frame: "*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF#",
			Want:  time.Date(2015, 12, 22, 16, 45, 49, 0, time.UTC),
			Bad: []prototest.Variant{{",221215,", ",321015,"}, {",221215,", ",221315,"}, {",221215,", ",220015,"}, {",221215,", ",000115,"},
				{",221215,", ",290223,"}, {",164549,", ",254549,"}, {",164549,", ",166049,"}, {",164549,", ",164599,"}, {",164549,", ",164560,"}},
		},
		{
			Name:  "h02 VP1",
			Frame: "*hq,356327080425330,VP1,A,2702.7245,S,15251.9311,E,0.48,0.0000,080917#",
			Want:  time.Date(2017, 9, 8, 0, 0, 0, 0, time.UTC),
			Bad:   []prototest.Variant{{",080917#", ",320917#"}, {",080917#", ",081317#"}, {",080917#", ",310917#"}},
		},
		{
			Name: "h02 binary", Hex: true,
			Frame: h02Bin, Want: time.Date(2016, 11, 13, 12, 45, 43, 0, time.UTC),
			Bad: []prototest.Variant{{"124543131116", "124543321016"}, {"124543131116", "124543131316"}, {"124543131116", "254543131116"},
				{"124543131116", "126143131116"}, {"124543131116", "124599131116"}},
		},
	})
}
