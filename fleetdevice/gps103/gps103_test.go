package gps103

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
	"github.com/matryer/is"
)

func gps103Decode(t *testing.T, frame string) (devproto.Message, devproto.Session, error) {
	t.Helper()
	var m devproto.Message
	s := devproto.Session{Transport: devproto.TCP, Now: prototest.Now}
	err := Decoder{}.Decode([]byte(frame), &s, &m)
	if err == nil {
		prototest.CheckDecoded(t, m)
	}
	return m, s, err
}

func TestGPS103Corpus(t *testing.T) {
	raws := prototest.RawRows(t)
	for i, row := range prototest.LoadCorpus(t) {
		is := is.NewRelaxed(t)
		raw := row.Raw(t)
		n, err := Decoder{}.Split(raw)
		is.NoErr(err) // a frame of the protocol
		if end := raw[len(raw)-1]; end == ';' || end == '*' {
			is.Equal(n, len(raw)) // the whole row is one frame
		} else {
			is.Equal(n, 0) // a row without its terminator: not whole yet
		}
		m, s, err := gps103Decode(t, string(raw))
		if err != nil {
			t.Errorf("%s: %v", row.Source, err)
			continue
		}
		prototest.CheckRow(t, row, m)
		// The report's event, verbatim (API.md §14's "event").
		for j, p := range prototest.RawPoints(raws[i]) {
			e, ok := p["event"].(string)
			switch {
			case !ok || j >= len(m.Positions):
			case e == "":
				if _, has := prototest.Attr(m.Positions[j], "event"); has {
					t.Errorf("%s: an event, want none", row.Source)
				}
			default:
				prototest.CheckAttrs(t, row.Source, map[string]any{"event": e}, m.Positions[j])
			}
		}
		if m.Kind == devproto.KindLogin && s.Identifier != m.Identifier {
			t.Errorf("%s: session identifier %q, want %q", row.Source, s.Identifier, m.Identifier)
		}
	}
}

func TestGPS103Handshake(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{"##,imei:359586015829802,A;", "##,imei:359586015829802,A", "##,imei:359586015829802,A\r\n"} {
		m, s, err := gps103Decode(t, frame)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindLogin)
		is.Equal(m.Identifier, "359586015829802")
		is.Equal(s.Identifier, "359586015829802") // the connection is the device's
		is.Equal(string(m.Reply), "LOAD")
	}
}

func TestGPS103Heartbeat(t *testing.T) {
	is := is.New(t)
	m, s, err := gps103Decode(t, "359586015829802;")
	is.NoErr(err)
	is.Equal(m.Kind, devproto.KindHeartbeat)
	is.Equal(m.Identifier, "359586015829802")
	is.Equal(s.Identifier, "") // a heartbeat names no connection
	is.Equal(string(m.Reply), "ON")

	// A heartbeat run into a report: ON, and the report.
	m, _, err = gps103Decode(t, "359769031878322imei:359769031878322,tracker,1602160718,2,F,221811.000,A,1655.2193,S,14546.6722,E,0.00,,")
	is.NoErr(err)
	is.Equal(m.Kind, devproto.KindPositions)
	is.Equal(string(m.Reply), "ON")
	is.Equal(len(m.Positions), 1)
}

func TestGPS103TimeFromTheTwoClocks(t *testing.T) {
	for _, c := range []struct {
		frame string
		want  time.Time
	}{
		// Local 19:29 against UTC 05:54: the device is 625 minutes behind,
		// and its report a day later in UTC.
		{"imei:353451044508750,oil1,0809231929,,F,055403.000,A,2233.1870,N,11354.3067,E,0.00,,;", time.Date(2008, 9, 24, 5, 54, 3, 0, time.UTC)},
		// Local 02:59 on the 27th against UTC 23:59: three hours ahead, so
		// the 26th in UTC (Traccar's test asserts it).
		{"imei:359710049092324,tracker,151027025958,,F,235957.000,A,2429.5156,N,04424.5828,E,0.01,27.91,,0,0,,,;", time.Date(2015, 10, 26, 23, 59, 57, 0, time.UTC)},
		// The local date with slashes, and a UTC clock 10:40 behind.
		{"imei:359710040656622,tracker,13/02/27 23:40,,F,125952.000,A,3450.9430,S,13828.6753,E,0.00,0", time.Date(2013, 2, 27, 12, 59, 52, 0, time.UTC)},
		// Exactly twelve hours apart: the device is taken to be ahead.
		{"imei:359710049092324,tracker,150101000000,,F,120000.000,A,2429.5156,N,04424.5828,E,0.01,27.91;", time.Date(2014, 12, 31, 12, 0, 0, 0, time.UTC)},
		// No UTC clock (a fix age in its place): the local time as it is.
		{"imei:353552045375005,tracker,150401165832,61.0,F,31.0,A,1050.73696,N,10636.49489,E,8.0,,22.0,", time.Date(2015, 4, 1, 16, 58, 0, 0, time.UTC)},
	} {
		is := is.New(t)
		m, _, err := gps103Decode(t, c.frame)
		is.NoErr(err)
		is.Equal(len(m.Positions), 1)
		is.Equal(m.Positions[0].Time, c.want)
	}
}

func TestGPS103Report(t *testing.T) {
	is := is.New(t)
	m, _, err := gps103Decode(t, "imei:353451044508750,001,0809231929,13554900601,F,055403.000,A,2233.1870,N,11354.3067,E,3.5,30.1,65.43,1,0,10.5%,0.0%,28;")
	is.NoErr(err)
	is.Equal(m.Identifier, "353451044508750")
	p := m.Positions[0]
	is.True(p.Valid)
	is.True(math.Abs(p.Latitude-(22+33.1870/60)) < 1e-9)
	is.True(math.Abs(p.Longitude-(113+54.3067/60)) < 1e-9)
	is.True(math.Abs(p.Speed-3.5*1.852) < 1e-9) // knots
	is.Equal(p.Heading, 30.1)
	is.Equal(p.Altitude, 65.43)
	for name, want := range map[string]any{"ignition": true, "door": false, "fuel1": 10.5, "fuel2": 0.0, "temp1_c": 28.0, "event": "001"} {
		got, _ := prototest.Attr(p, name)
		is.Equal(got, want)
	}
	is.Equal(len(m.Reply), 0)

	// The hemisphere may come before the degrees.
	m, _, err = gps103Decode(t, "imei:353552045403597,tracker,150420050648,53.0,F,0.0,A,S,5306.64155,W,00700.77848,0.0,,1.0,;")
	is.NoErr(err)
	is.True(m.Positions[0].Latitude < 0)
	is.True(m.Positions[0].Longitude < 0)
}

func TestGPS103SOSIsAnswered(t *testing.T) {
	is := is.New(t)
	m, _, err := gps103Decode(t, "imei:359586015829802,help me,0809231429,13554900601,F,062947.294,A,2234.4026,N,11354.3277,E,0.00,")
	is.NoErr(err)
	is.Equal(string(m.Reply), "**,imei:359586015829802,E;")
	a, _ := prototest.Attr(m.Positions[0], "alarm")
	is.Equal(a, "sos")
}

func TestGPS103ReportsWithoutCoordinates(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{
		"imei:359586015829802,tracker,000000000,13554900601,L,;",
		"imei:864895030279986,ac alarm,180404174252,,L,,,296a,,51f7,,,",
		"imei:868683027758113,OBD,180905200218,,,,0,0,0.39%,70,9.41%,494,0.00,P0137,P0430,,;",
		"imei:864180034124375,vr,0c00fa011ea05a03d726977103ad;",
		"imei:359710049075097,help me,,,L,,,113b,,558f,,,,,0,0,,,",
	} {
		m, _, err := gps103Decode(t, frame)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindOther)
		is.Equal(len(m.Positions), 0) // a cell fix, OBD data, a photo: no coordinates
	}
	m, _, _ := gps103Decode(t, "imei:359710049075097,help me,,,L,,,113b,,558f,,,,,0,0,,,")
	is.Equal(m.Identifier, "359710049075097")
	is.Equal(string(m.Reply), "**,imei:359710049075097,E;") // the SOS is answered all the same
}

func TestGPS103AlternativeReport(t *testing.T) {
	is := is.New(t)
	m, _, err := gps103Decode(t, "imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*")
	is.NoErr(err)
	is.Equal(len(m.Positions), 1)
	p := m.Positions[0]
	is.Equal(p.Time, time.Date(2018, 10, 24, 21, 47, 34, 0, time.UTC))
	is.Equal(p.Latitude, -33.42317)
	is.Equal(p.Longitude, -70.61930)
	is.Equal(p.Speed, 67.0) // km/h on the wire
	is.Equal(p.Satellites, 8)
	is.True(p.Valid)
	hdop, _ := prototest.Attr(p, "hdop")
	is.Equal(hdop, 1.0)
}

func TestGPS103DecodeRefusesGarbage(t *testing.T) {
	is := is.New(t)
	for _, frame := range []string{"", ";", "GET / HTTP/1.1", "imei:3595\x0086015829802,A;"} {
		_, _, err := gps103Decode(t, frame)
		is.True(errors.Is(err, devproto.ErrGarbage))
	}
}

func TestGPS103Split(t *testing.T) {
	report := []byte("imei:359710045559474,tracker,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;")
	t.Run("streams", func(t *testing.T) {
		prototest.CheckStream(t, Decoder{}, [][]byte{
			[]byte("##,imei:359586015829802,A;"),
			report,
			[]byte("359586015829802;"),
			[]byte("imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*"),
			report,
		})
	})
	t.Run("line ends", func(t *testing.T) {
		is := is.New(t)
		frames, left := prototest.SplitStream(t, Decoder{}, []byte("359586015829802\r\nimei:353451047570260,tracker,1302110948,,F,144807.000,A,0805.6615,S,07859.9763,W,0.00,,\n"), func() int { return 1 })
		is.Equal(frames, []string{"359586015829802", "imei:353451047570260,tracker,1302110948,,F,144807.000,A,0805.6615,S,07859.9763,W,0.00,,"})
		is.Equal(len(left), 0)
	})
	t.Run("garbage", func(t *testing.T) {
		is := is.New(t)
		prototest.CheckGarbage(t, Decoder{}, []byte("GET / HTTP/1.1\r\n"))
		prototest.CheckGarbage(t, Decoder{}, []byte("imei:35958\x0160;"))
		prototest.CheckGarbage(t, Decoder{}, []byte(";imei:359586015829802,A;"))
		prototest.CheckGarbage(t, Decoder{}, append([]byte("imei:"), bytes.Repeat([]byte("1"), 2048)...))
		n, err := Decoder{}.Split([]byte("imei:" + strings.Repeat("1", 2000)))
		is.NoErr(err)
		is.Equal(n, 0) // within the bound: not whole yet
	})
}

func FuzzGPS103(f *testing.F) {
	prototest.FuzzProtocol(f, Decoder{},
		[]byte("359769031878322imei:359769031878322,tracker,1602160718,2,F,221811.000,A,1655.2193,S,14546.6722,E,0.00,,"),
		[]byte("imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*"),
		[]byte("imei:359710049075097,help me,,,L,,,113b,,558f,,,,,0,0,,,"),
		[]byte("imei:359710045559474,jt,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;"), // an answer
		[]byte("imei:359710049028435,OBD,160316053657,70430,,,0,49,60.00%,46,19.22%,859,0.00,U1108,,,;"),
	)
}

var gps103Bench = []byte("imei:865328021058861,tracker,151027041419,,F,011531.000,A,6020.2979,N,02506.1940,E,0.49,113.30,,0,0,0.0%,,;")

func BenchmarkGPS103Decode(b *testing.B) { prototest.BenchmarkDecode(b, Decoder{}, gps103Bench) }
func BenchmarkGPS103Ratio(b *testing.B)  { prototest.BenchmarkTextRatio(b, Decoder{}, gps103Bench) }

// TestTelematicsRows decodes every row of testdata/telematics.jsonl and
// compares the attributes of the position it names with the row's
// (prototest.CheckTelematicsRows).
func TestTelematicsRows(t *testing.T) {
	prototest.CheckTelematicsRows(t, "gps103", func(t *testing.T, row prototest.TelematicsRow) (string, []devproto.Message) {
		return prototest.DecodeTelematics(t, Decoder{}, row)
	})
}

// TestEveryAttributeIsOneTheAPIAccepts decodes everything the tests hold
// (prototest.EveryAttribute) and checks every attribute the decoder
// produced. The fuzz target checks the same of arbitrary input.
func TestEveryAttributeIsOneTheAPIAccepts(t *testing.T) {
	names := prototest.EveryAttribute(t, Decoder{})
	names.Want(t, "alarm", "event", "ignition")
}

// TestImpossibleDatesAreNoFix: a date or time that cannot exist (day 32,
// month 0 or 13, 29 February of a common year, hour 25, minute or second
// 60 and past) is a position without a fix, at no time: never rolled over
// into another time (API.md §13). Each frame is first decoded as sent,
// then with its date or time made impossible (prototest.CheckImpossibleDates).
func TestImpossibleDatesAreNoFix(t *testing.T) {
	prototest.CheckImpossibleDates(t, Decoder{}, []prototest.DateCase{
		{
			Name:  "gps103",
			Frame: "imei:353451044508750,001,0809231929,13554900601,F,055403.000,A,2233.1870,N,11354.3067,E,3.5,30.1,65.43,1,0,10.5%,0.0%,28;",
			Want:  time.Date(2008, 9, 24, 5, 54, 3, 0, time.UTC),
			Bad: []prototest.Variant{{",0809231929,", ",0809321929,"}, {",0809231929,", ",0813231929,"}, {",0809231929,", ",0809232529,"},
				{",0809231929,", ",0809231960,"}, {",055403.000,", ",055460.000,"}, {",055403.000,", ",255403.000,"}},
		},
		{
			Name:  "gps103 alternative",
			Frame: "imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*",
			Want:  time.Date(2018, 10, 24, 21, 47, 34, 0, time.UTC),
			Bad:   []prototest.Variant{{",241018,", ",321018,"}, {",241018,", ",241318,"}, {",214734,", ",254734,"}, {",214734,", ",214799,"}},
		},
	})
}
