package queclink

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
	"github.com/matryer/is"
)

func queclinkDecode(t *testing.T, frame string) (devproto.Message, error) {
	t.Helper()
	var m devproto.Message
	s := devproto.Session{Transport: devproto.TCP, Now: prototest.Now}
	err := Decoder{}.Decode([]byte(frame), &s, &m)
	if err == nil {
		prototest.CheckDecoded(t, m)
	}
	return m, err
}

func TestQueclinkCorpus(t *testing.T) {
	rows := prototest.LoadCorpus(t)
	raws := prototest.RawRows(t)
	for i, row := range rows {
		is := is.NewRelaxed(t)
		raw := row.Raw(t)
		n, err := Decoder{}.Split(raw)
		is.NoErr(err)         // a frame of the protocol
		is.Equal(n, len(raw)) // the whole row is one frame
		m, err := queclinkDecode(t, string(raw))
		if err != nil {
			t.Errorf("%s: %v", row.Source, err)
			continue
		}
		prototest.CheckRow(t, row, m)
		for j, p := range prototest.RawPoints(raws[i]) {
			if h, ok := p["hdop"].(float64); ok && j < len(m.Positions) {
				prototest.CheckAttrs(t, row.Source, map[string]any{"hdop": h}, m.Positions[j])
			}
		}
	}
}

func TestQueclinkSeveralPositions(t *testing.T) {
	is := is.New(t)
	m, err := queclinkDecode(t, "+RESP:GTFRI,1A0900,860599000306845,G3-313,0,0,4,1,2.1,0,426.7,8.611466,47.681639,20181214134603,0228,0001,077F,4812,25.2,1,5.7,34,437.3,8.611600,47.681846,20181214134619,0228,0001,077F,4812,25.2,1,4.4,62,438.2,8.611893,47.681983,20181214134633,0228,0001,077F,4812,25.2,1,4.8,78,436.6,8.612236,47.682040,20181214134648,0228,0001,077F,4812,25.2,83,20181214134702,0654$")
	is.NoErr(err)
	is.Equal(m.Kind, devproto.KindPositions)
	is.Equal(m.Identifier, "860599000306845")
	is.Equal(len(m.Positions), 4)
	for i, want := range []struct {
		lat, lon, speed, course float64
		second                  int
	}{
		{47.681639, 8.611466, 2.1, 0, 3},
		{47.681846, 8.611600, 5.7, 34, 19},
		{47.681983, 8.611893, 4.4, 62, 33},
		{47.682040, 8.612236, 4.8, 78, 48},
	} {
		p := m.Positions[i]
		is.Equal(p.Latitude, want.lat)
		is.Equal(p.Longitude, want.lon)
		is.Equal(p.Speed, want.speed) // km/h on the wire
		is.Equal(p.Heading, want.course)
		is.Equal(p.Time, time.Date(2018, 12, 14, 13, 46, want.second, 0, time.UTC))
		is.True(p.Valid)
	}
	level, _ := prototest.Attr(m.Positions[3], "battery_level")
	is.Equal(level, 83.0) // the device's state goes with the last position
	_, ok := prototest.Attr(m.Positions[0], "battery_level")
	is.True(!ok)
}

func TestQueclinkBufferedReportsAreReports(t *testing.T) {
	is := is.New(t)
	resp := "+RESP:GTFRI,060402,862894021808798,,,10,1,1,0.0,349,394.3,-63.287717,-17.662410,20160116234031,0736,0003,6ABA,8305,00,3326.8,,,,94,220100,,,,20160116194035,4D83$"
	live, err := queclinkDecode(t, resp)
	is.NoErr(err)
	buff, err := queclinkDecode(t, strings.Replace(resp, "+RESP", "+BUFF", 1))
	is.NoErr(err)
	is.Equal(buff.Kind, devproto.KindPositions)
	is.Equal(buff.Positions, live.Positions)
}

func TestQueclinkHeartbeatIsAcknowledged(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{
		"+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$",
		"+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0", // a datagram without its $
	} {
		m, err := queclinkDecode(t, frame)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindHeartbeat)
		is.Equal(m.Identifier, "135790246811220")
		is.Equal(string(m.Reply), "+SACK:GTHBD,1A0401,11F0$")
	}
	// Other answers are not acknowledged, and carry no position.
	m, err := queclinkDecode(t, "+ACK:GTGEO,1A0102,135790246811220,,0,0008,20100310172830,11F0$")
	is.NoErr(err)
	is.Equal(m.Kind, devproto.KindOther)
	is.Equal(len(m.Reply), 0)
	is.Equal(m.Identifier, "135790246811220")
}

func TestQueclinkReportTypes(t *testing.T) {
	for _, c := range []struct {
		name, frame     string
		lat, lon, speed float64
		valid           bool
		satellites      int
		attrs           map[string]any
		time            time.Time
	}{
		{
			name:  "GTERI, satellites after the cell",
			frame: "+RESP:GTERI,6E0A03,868589060745174,,00000100,,10,1,1,0.0,0,1509.0,-90.544928,14.584461,20250307182819,0704,0001,13A7,000B60AB,01,12,358.6,,,,,100,1A0000,0,2,00,6,5,0E7109BB,283F,SENTEMP1,7805412CF2DD,1,3466,24,36,24.91,100,01,6,2,,083F,SENTEMP2,7805412CF25C,0,,,,,20250307182820,1ABC$",
			lat:   14.584461, lon: -90.544928, valid: true, satellites: 12,
			attrs: map[string]any{"hdop": 1.0, "odometer_km": 358.6, "battery_level": 100.0, "event": "GTERI"},
			time:  time.Date(2025, 3, 7, 18, 28, 19, 0, time.UTC),
		},
		{
			name:  "GTIGN",
			frame: "+RESP:GTIGN,060228,862894020180553,,9860,0,0.2,189,420.0,-63.158195,-17.800608,20160309022951,0736,0003,6AD4,3471,00,,881.2,20160308222956,129A$",
			lat:   -17.800608, lon: -63.158195, speed: 0.2, valid: true,
			attrs: map[string]any{"ignition": true, "odometer_km": 881.2},
			time:  time.Date(2016, 3, 9, 2, 29, 51, 0, time.UTC),
		},
		{
			name:  "GTIGN of a model with two more fields (CV200)",
			frame: "+RESP:GTIGN,BD0221,861778061565387,CV200,,0,140944,0,0.0,358,17.6,-2.223488,51.882342,20251222020123,0234,0015,6093,000F830E,,,5810.9,20251222070035,20251222070035,C60E$",
			lat:   51.882342, lon: -2.223488, valid: true,
			attrs: map[string]any{"ignition": true},
			time:  time.Date(2025, 12, 22, 2, 1, 23, 0, time.UTC),
		},
		{
			name:  "GTCAN: the fix's own validity",
			frame: "+RESP:GTCAN,310603,863286023346480,gv65,00,1,C03FFFFF,,2,H2843820,373.76,1440,44,77,M23,P35.00,1810,,59.48,42.68,16.80,15.42,,,610,,0,,,0,42.7,263,27.2,-2.156478,51.899989,20171021151805,0234,0010,15D6,9AD2,00,20171021151807,0B28$",
			lat:   51.899989, lon: -2.156478, speed: 42.7, valid: false,
			time: time.Date(2017, 10, 21, 15, 18, 5, 0, time.UTC),
		},
		{
			name:  "GTCAN with the extended mask",
			frame: "+RESP:GTCAN,310701,863286023712855,,10,0,E03FFFFF,,2,H46358,12305.50,601,0,83,,P53.00,,0,2749.15,0.19,2.80,,,,40,,0,,,007FFFFF,,,,,,0,,,134,37,6,0.19,,0.00,0,,,,,,0,0,0,0,0.0,312,358.4,14.271460,50.110796,20181110103130,0230,0003,94D4,3B30,00,20181110105348,2969$",
			lat:   50.110796, lon: 14.271460, valid: false,
			time: time.Date(2018, 11, 10, 10, 31, 30, 0, time.UTC),
		},
		{
			name:  "GTLSW",
			frame: "+RESP:GTLSW,300500,860599002636595,,0,1,0,0.0,0,2886.5,-78.467145,-0.165335,20180518221818,,,,,,20180518221819,B6FF$",
			lat:   -0.165335, lon: -78.467145, valid: true,
			attrs: map[string]any{"din1": true, "hdop": 0.0},
			time:  time.Date(2018, 5, 18, 22, 18, 18, 0, time.UTC),
		},
		{
			name:  "GTOBD",
			frame: "+RESP:GTOBD,360201,864251020186064,4T1BE46KX7U018210,,0,19FFFF,4T1BE46KX7U018210,1,14283,983901C0,799,36,18,,33792,0,0,0,,,38,,6,53557,0,0.0,0,219.5,-76.661456,39.832588,20160507132153,20160507132154,0230$",
			lat:   39.832588, lon: -76.661456, valid: true,
			time: time.Date(2016, 5, 7, 13, 21, 53, 0, time.UTC),
		},
		{
			name:  "GTDAR",
			frame: "+RESP:GTDAR,F10406,865284049582228,,4,0,,,1,18.5,0,129.4,114.015430,22.537279,20210922004634,0460,0000,27BD,0DFC,,,,20210922004635,082B$",
			lat:   22.537279, lon: 114.015430, speed: 18.5, valid: true,
			time: time.Date(2021, 9, 22, 0, 46, 34, 0, time.UTC),
		},
		{
			name:  "GTNMR (the general decoder)",
			frame: "+RESP:GTNMR,423033,355197370058831,,0,0,0,1,0,0.0,298,182.7,-79.257983,43.875152,20220627132020,,,,,15,0,74,20220627144928,03CF$",
			lat:   43.875152, lon: -79.257983, valid: true,
			attrs: map[string]any{"motion": false, "battery_level": 74.0, "hdop": 0.0, "event": "GTNMR"},
			time:  time.Date(2022, 6, 27, 13, 20, 20, 0, time.UTC),
		},
		{
			name:  "GTSPD (the general decoder)",
			frame: "+RESP:GTSPD,020102,135790246811220,,0,0,1,1,88.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0$",
			lat:   31.222073, lon: 121.354335, speed: 88.3, valid: true,
			attrs: map[string]any{"alarm": "overspeed"},
			time:  time.Date(2009, 2, 14, 1, 32, 54, 0, time.UTC),
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			m, err := queclinkDecode(t, c.frame)
			is.NoErr(err)
			is.Equal(m.Kind, devproto.KindPositions)
			is.Equal(len(m.Positions), 1)
			p := m.Positions[0]
			is.Equal(p.Latitude, c.lat)
			is.Equal(p.Longitude, c.lon)
			is.Equal(p.Speed, c.speed)
			is.Equal(p.Valid, c.valid)
			is.Equal(p.Time, c.time)
			is.Equal(p.Satellites, c.satellites)
			prototest.CheckAttrs(t, c.name, c.attrs, p)
		})
	}
}

func TestQueclinkReportsWithoutCoordinates(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{
		"+RESP:GTINF,1A0800,860599000773978,GL300,41,89701016426133851978,17,0,1,26.6,,3.90,1,1,0,0,0,20161003184043,69,1,44,,,20161004040811,022C$",
		"+RESP:GTSTR,400201,862365030034957,GL500,0,1,2,21.8,100,0,,,,,,,0234,0015,03C3,3550,,,,20161129174009,0023$",
		"+RESP:GTFRI,210102,354524044925825,,1,1,1,,,,,,,,310,410,51bc,ca1dae6,10800,1,20170318214333,0002$",
		"+RESP:GTPNA,F50201,866425030235982,GL300M,20190208124909,0BD5$",
		"+RESP:GTVER,1A0800,860599000773978,GL300,GL300,0A03,0103,20161007041531,10F8$",
		"+BUFF:GTIGF,840502,867963063190000,,0,0,,,,,,,0268,0006,22C4,13E5,00,,,20250116170541,22D0$",
	} {
		m, err := queclinkDecode(t, frame)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindOther)
		is.Equal(len(m.Positions), 0)
		is.Equal(len(m.Reply), 0)
		is.True(m.Identifier != "") // the device is known alive
	}
}

func TestQueclinkDecodeRefusesGarbage(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{
		"",
		"GTFRI,1A0900,860599000306845$",
		"+RSP:GTFRI,1A0900$",
		"+RESP:GTFRI,1A0900,\x00860599000306845$",
		"+RESP:GTFRI," + strings.Repeat("1,", 2100) + "$",
	} {
		_, err := queclinkDecode(t, frame)
		is.True(errors.Is(err, devproto.ErrGarbage))
	}
}

func TestQueclinkSplit(t *testing.T) {
	fri := []byte("+RESP:GTFRI,060228,862894020180553,,,10,1,1,20.0,147,329.7,-62.899703,-17.720434,20160309113548,0736,0003,6AAE,3381,00,913.3,,,,0,220101,,,,20160309073554,132B$")
	t.Run("streams", func(t *testing.T) {
		prototest.CheckStream(t, Decoder{}, [][]byte{
			fri,
			[]byte("+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$"),
			[]byte("+ACK:GTRTO,1A0800,860599000773978,GL300,VER,FFFF,20161006053520,0C19$"), // an answer
			[]byte("+BUFF:GTIGF,060228,862894020180553,,1958,0,0.0,240,390.3,-63.089213,-17.764712,20160309122854,0736,0003,6AB8,5A23,00,,936.8,20160309082858,1368$"),
			fri,
			fri,
		})
	})
	t.Run("garbage", func(t *testing.T) {
		is := is.New(t)
		prototest.CheckGarbage(t, Decoder{}, []byte("GET / HTTP/1.1\r\n"))
		prototest.CheckGarbage(t, Decoder{}, []byte("+RSP"))                                     // binary @Track
		prototest.CheckGarbage(t, Decoder{}, []byte("+RE$"))                                     // ended before its head
		prototest.CheckGarbage(t, Decoder{}, []byte{'+', 0, 0x38, 0x00, 0x08, 0x65, 0x13, 0x40}) // binary @Track
		prototest.CheckGarbage(t, Decoder{}, []byte("+RESP:GTFRI,\x01$"))
		prototest.CheckGarbage(t, Decoder{}, append([]byte("+RESP:"), bytes.Repeat([]byte("1"), 4096)...))
		n, err := Decoder{}.Split([]byte("+RES"))
		is.NoErr(err)
		is.Equal(n, 0) // the head is not whole yet
	})
}

func FuzzQueclink(f *testing.F) {
	prototest.FuzzProtocol(f, Decoder{},
		[]byte("+RESP:GTERI,6E0A03,868589060745174,,00000100,,10,1,1,0.0,0,1509.0,-90.544928,14.584461,20250307182819,0704,0001,13A7,000B60AB,01,12,358.6,,,,,100,1A0000,0,2,00,6,5,0E7109BB,283F,SENTEMP1,7805412CF2DD,1,3466,24,36,24.91,100,01,6,2,,083F,SENTEMP2,7805412CF25C,0,,,,,20250307182820,1ABC$"),
		[]byte("+RESP:GTCAN,310603,863286023346480,gv65,00,1,C03FFFFF,,2,H2843820,373.76,1440,44,77,M23,P35.00,1810,,59.48,42.68,16.80,15.42,,,610,,0,,,0,42.7,263,27.2,-2.156478,51.899989,20171021151805,0234,0010,15D6,9AD2,00,20171021151807,0B28$"),
		[]byte("+RESP:GTOBD,360201,864251020186064,4T1BE46KX7U018210,,0,19FFFF,4T1BE46KX7U018210,1,14283,983901C0,799,36,18,,33792,0,0,0,,,38,,6,53557,0,0.0,0,219.5,-76.661456,39.832588,20160507132153,20160507132154,0230$"),
		[]byte("+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$"),
		[]byte("+RESP:GTIGN,BD0221,861778061565387,CV200,,0,140944,0,0.0,358,17.6,-2.223488,51.882342,20251222020123,0234,0015,6093,000F830E,,,5810.9,20251222070035,20251222070035,C60E$"),
	)
}

var queclinkBench = []byte("+RESP:GTFRI,060228,862894020180553,,,10,1,1,20.0,147,329.7,-62.899703,-17.720434,20160309113548,0736,0003,6AAE,3381,00,913.3,,,,0,220101,,,,20160309073554,132B$")

func BenchmarkQueclinkDecode(b *testing.B) { prototest.BenchmarkDecode(b, Decoder{}, queclinkBench) }
func BenchmarkQueclinkRatio(b *testing.B)  { prototest.BenchmarkTextRatio(b, Decoder{}, queclinkBench) }

// GTFRI's pattern, the longest, stays small enough for Go's regexp to
// match it by backtracking (at most 500 instructions), several times
// faster than the automaton it takes past that.
func TestQueclinkFRIPatternIsBacktracked(t *testing.T) {
	is := is.New(t)
	re, err := syntax.Parse(glFri.String(), syntax.Perl)
	is.NoErr(err)
	prog, err := syntax.Compile(re.Simplify())
	is.NoErr(err)
	is.True(len(prog.Inst) <= 500)
}

func TestNonCapturing(t *testing.T) {
	is := is.New(t)
	is.Equal(devproto.NonCapturing(`(a)\((b)[(](?:c)(d|(e))`), `(?:a)\((?:b)[(](?:c)(?:d|(?:e))`)
	re := regexp.MustCompile(devproto.NonCapturing(glLocation.String()))
	is.Equal(re.NumSubexp(), 0)
	// The same matches as the pattern with its groups.
	loc := "1,5.7,34,437.3,8.611600,47.681846,20181214134619,0228,0001,077F,4812,25.2,"
	is.Equal(re.FindStringIndex(loc), glLocationFind.FindStringIndex(loc))
}

// TestTelematicsRows decodes every row of testdata/telematics.jsonl and
// compares the attributes of the position it names with the row's
// (prototest.CheckTelematicsRows).
func TestTelematicsRows(t *testing.T) {
	prototest.CheckTelematicsRows(t, "queclink", func(t *testing.T, row prototest.TelematicsRow) (string, []devproto.Message) {
		return prototest.DecodeTelematics(t, Decoder{}, row)
	})
}

// TestEveryAttributeIsOneTheAPIAccepts decodes everything the tests hold
// (prototest.EveryAttribute) and checks every attribute the decoder
// produced. The fuzz target checks the same of arbitrary input.
func TestEveryAttributeIsOneTheAPIAccepts(t *testing.T) {
	names := prototest.EveryAttribute(t, Decoder{})
	names.Want(t, "alarm", "battery_level", "din1", "dout1", "event", "hdop", "ignition", "odometer_km")
}

// TestImpossibleDatesAreNoFix: a date or time that cannot exist (day 32,
// month 0 or 13, 29 February of a common year, hour 25, minute or second
// 60 and past) is a position without a fix, at no time: never rolled over
// into another time (API.md §13). Each frame is first decoded as sent,
// then with its date or time made impossible (prototest.CheckImpossibleDates).
func TestImpossibleDatesAreNoFix(t *testing.T) {
	prototest.CheckImpossibleDates(t, Decoder{}, []prototest.DateCase{
		{
			Name:  "queclink GTFRI",
			Frame: "+RESP:GTFRI,060228,862894020180553,,,10,1,1,20.0,147,329.7,-62.899703,-17.720434,20160309113548,0736,0003,6AAE,3381,00,913.3,,,,0,220101,,,,20160309073554,132B$",
			Want:  time.Date(2016, 3, 9, 11, 35, 48, 0, time.UTC),
			Bad: []prototest.Variant{{",20160309113548,", ",20160332113548,"}, {",20160309113548,", ",20161309113548,"},
				{",20160309113548,", ",20160309253548,"}, {",20160309113548,", ",20160309116048,"}, {",20160309113548,", ",20160230113548,"}},
		},
		{
			Name:  "queclink GTIGN",
			Frame: "+RESP:GTIGN,060228,862894020180553,,9860,0,0.2,189,420.0,-63.158195,-17.800608,20160309022951,0736,0003,6AD4,3471,00,,881.2,20160308222956,129A$",
			Want:  time.Date(2016, 3, 9, 2, 29, 51, 0, time.UTC),
			Bad:   []prototest.Variant{{",20160309022951,", ",20160230022951,"}, {",20160309022951,", ",20160431022951,"}, {",20160309022951,", ",20160309022960,"}},
		},
		{
			Name:  "queclink GTSOS",
			Frame: "+RESP:GTSOS,020102,135790246811220,,0,0,1,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0$",
			Want:  time.Date(2009, 2, 14, 1, 32, 54, 0, time.UTC),
			Bad:   []prototest.Variant{{",20090214013254,", ",20090229013254,"}, {",20090214013254,", ",20090214013299,"}},
		},
	})
}
