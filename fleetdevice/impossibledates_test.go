package fleetdevice

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/matryer/is"
)

// TestImpossibleDatesAreNoFix: a date or time that cannot exist (day 32,
// month 0 or 13, 29 February of a common year, hour 25, minute or second
// 60 and past) is a position without a fix, at no time, in every protocol
// that sends dates as fields: never rolled over into another time
// (API.md §13). Each protocol's frame is first decoded as sent, then with
// its date or time made impossible.
func TestImpossibleDatesAreNoFix(t *testing.T) {
	type variant struct{ old, new string }
	h02Bin := "2441060116601245431311165035313006004318210e000000fffffbffff0024" // 12:45:43 13/11/16
	gt06 := func(date [6]byte) string {
		data := gtGPSBytes(gtFix{local: time.Date(2026, 5, 1, 10, 20, 30, 0, time.UTC), sats: 9, lat: 52.5, lon: 13.4, valid: true})
		copy(data, date[:])
		return string(gtFrameOf(false, gtGPS, data, 1))
	}
	for _, c := range []struct {
		name  string
		proto Decoder
		frame string
		want  time.Time // the frame as sent
		bad   []variant // each made impossible
		hex   bool
	}{
		{
			name: "h02 text", proto: H02(),
			frame: "*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF#",
			want:  time.Date(2015, 12, 22, 16, 45, 49, 0, time.UTC),
			bad: []variant{{",221215,", ",321015,"}, {",221215,", ",221315,"}, {",221215,", ",220015,"}, {",221215,", ",000115,"},
				{",221215,", ",290223,"}, {",164549,", ",254549,"}, {",164549,", ",166049,"}, {",164549,", ",164599,"}, {",164549,", ",164560,"}},
		},
		{
			name: "h02 VP1", proto: H02(),
			frame: "*hq,356327080425330,VP1,A,2702.7245,S,15251.9311,E,0.48,0.0000,080917#",
			want:  time.Date(2017, 9, 8, 0, 0, 0, 0, time.UTC),
			bad:   []variant{{",080917#", ",320917#"}, {",080917#", ",081317#"}, {",080917#", ",310917#"}},
		},
		{
			name: "h02 binary", proto: H02(), hex: true,
			frame: h02Bin, want: time.Date(2016, 11, 13, 12, 45, 43, 0, time.UTC),
			bad: []variant{{"124543131116", "124543321016"}, {"124543131116", "124543131316"}, {"124543131116", "254543131116"},
				{"124543131116", "126143131116"}, {"124543131116", "124599131116"}},
		},
		{
			name: "gt06", proto: GT06(),
			frame: gt06([6]byte{26, 5, 1, 10, 20, 30}), want: time.Date(2026, 5, 1, 10, 20, 30, 0, time.UTC),
			bad: []variant{{gt06([6]byte{26, 5, 1, 10, 20, 30}), gt06([6]byte{26, 10, 32, 10, 20, 30})},
				{gt06([6]byte{26, 5, 1, 10, 20, 30}), gt06([6]byte{26, 0, 1, 10, 20, 30})},
				{gt06([6]byte{26, 5, 1, 10, 20, 30}), gt06([6]byte{26, 13, 1, 10, 20, 30})},
				{gt06([6]byte{26, 5, 1, 10, 20, 30}), gt06([6]byte{26, 2, 29, 10, 20, 30})},
				{gt06([6]byte{26, 5, 1, 10, 20, 30}), gt06([6]byte{26, 5, 1, 25, 20, 30})},
				{gt06([6]byte{26, 5, 1, 10, 20, 30}), gt06([6]byte{26, 5, 1, 10, 61, 70})}},
		},
		{
			name: "gps103", proto: GPS103(),
			frame: "imei:353451044508750,001,0809231929,13554900601,F,055403.000,A,2233.1870,N,11354.3067,E,3.5,30.1,65.43,1,0,10.5%,0.0%,28;",
			want:  time.Date(2008, 9, 24, 5, 54, 3, 0, time.UTC),
			bad: []variant{{",0809231929,", ",0809321929,"}, {",0809231929,", ",0813231929,"}, {",0809231929,", ",0809232529,"},
				{",0809231929,", ",0809231960,"}, {",055403.000,", ",055460.000,"}, {",055403.000,", ",255403.000,"}},
		},
		{
			name: "gps103 alternative", proto: GPS103(),
			frame: "imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*",
			want:  time.Date(2018, 10, 24, 21, 47, 34, 0, time.UTC),
			bad:   []variant{{",241018,", ",321018,"}, {",241018,", ",241318,"}, {",214734,", ",254734,"}, {",214734,", ",214799,"}},
		},
		{
			name: "queclink GTFRI", proto: Queclink(),
			frame: "+RESP:GTFRI,060228,862894020180553,,,10,1,1,20.0,147,329.7,-62.899703,-17.720434,20160309113548,0736,0003,6AAE,3381,00,913.3,,,,0,220101,,,,20160309073554,132B$",
			want:  time.Date(2016, 3, 9, 11, 35, 48, 0, time.UTC),
			bad: []variant{{",20160309113548,", ",20160332113548,"}, {",20160309113548,", ",20161309113548,"},
				{",20160309113548,", ",20160309253548,"}, {",20160309113548,", ",20160309116048,"}, {",20160309113548,", ",20160230113548,"}},
		},
		{
			name: "queclink GTIGN", proto: Queclink(),
			frame: "+RESP:GTIGN,060228,862894020180553,,9860,0,0.2,189,420.0,-63.158195,-17.800608,20160309022951,0736,0003,6AD4,3471,00,,881.2,20160308222956,129A$",
			want:  time.Date(2016, 3, 9, 2, 29, 51, 0, time.UTC),
			bad:   []variant{{",20160309022951,", ",20160230022951,"}, {",20160309022951,", ",20160431022951,"}, {",20160309022951,", ",20160309022960,"}},
		},
		{
			name: "queclink GTSOS", proto: Queclink(),
			frame: "+RESP:GTSOS,020102,135790246811220,,0,0,1,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0$",
			want:  time.Date(2009, 2, 14, 1, 32, 54, 0, time.UTC),
			bad:   []variant{{",20090214013254,", ",20090229013254,"}, {",20090214013254,", ",20090214013299,"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			frames := []string{c.frame}
			for _, b := range c.bad {
				is.True(strings.Contains(c.frame, b.old)) // the variant changes the frame
				frames = append(frames, strings.Replace(c.frame, b.old, b.new, 1))
			}
			for i, f := range frames {
				raw := []byte(f)
				if c.hex {
					raw = h02Hex(t, f)
				}
				var m devproto.Message
				s := devproto.Session{Transport: devproto.TCP, Identifier: "1", Now: corpusNow}
				is.NoErr(c.proto.Decode(raw, &s, &m))
				checkDecoded(t, m)
				if m.Kind != devproto.KindPositions || len(m.Positions) != 1 {
					t.Fatalf("%q: kind %v, %d positions; want one position", f, m.Kind, len(m.Positions))
				}
				p := m.Positions[0]
				if i == 0 {
					is.True(p.Valid)
					is.Equal(p.Time, c.want)
					continue
				}
				if p.Valid || !p.Time.IsZero() {
					t.Errorf("%q: valid %v at %v; want no fix, at no time", f, p.Valid, p.Time)
				}
			}
		})
	}
}

// OsmAnd's written times (ISO 8601, yyyy-MM-dd HH:mm:ss) that cannot exist
// are no fix as well; a time that is no time at all is a bad request.
func TestOsmAndImpossibleTimesAreNoFix(t *testing.T) {
	for _, c := range []struct{ query, json string }{
		{"2016-13-01T00:00:00Z", "2016-13-01T00:00:00Z"},
		{"2026-05-32T10:00:00Z", "2026-05-32T10:00:00Z"},
		{"2026-05-01T10:60:00%2B02:00", "2026-05-01T10:60:00+02:00"},
		{"2026-05-01T10:00:60", "2026-05-01T10:00:60"},
		{"2025-02-29T00:00:00.5Z", "2025-02-29T00:00:00.5Z"},
		{"2016-01-01+25:00:00", ""},
		{"2026-02-30+10:00:00", ""},
		{"2026-00-10+10:00:00", ""},
	} {
		is := is.New(t)
		m, _, err := osmAndDecode(t, query("id=1&lat=60&lon=30&timestamp="+c.query))
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindPositions)
		is.True(!m.Positions[0].Valid)
		is.True(m.Positions[0].Time.IsZero())
		if c.json == "" {
			continue
		}
		m, _, err = osmAndDecode(t, jsonRequest(`{"device_id":"1","location":{"timestamp":"`+c.json+`","coords":{"latitude":1,"longitude":2}}}`))
		is.NoErr(err)
		is.True(!m.Positions[0].Valid)
		is.True(m.Positions[0].Time.IsZero())
	}
	for _, v := range []string{"2016-01-01T10:00", "2016-1-01T10:00:00Z", "20160101T100000Z", "2016-01-01T10:00:00%2B5", "2016-01-01+10:00:00Z"} {
		_, _, err := osmAndDecode(t, query("id=1&lat=60&lon=30&timestamp="+v))
		if err == nil {
			t.Errorf("timestamp %q: decoded, want an error", v)
		}
	}
}
