package osmand

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
	"github.com/matryer/is"
)

func osmAndDecode(t *testing.T, r Request) (devproto.Message, bool, error) {
	t.Helper()
	var m devproto.Message
	s := devproto.Session{Transport: devproto.HTTP, Now: prototest.Now}
	isJSON, err := Decode(r, &s, &m)
	if err == nil {
		prototest.CheckDecoded(t, m)
		if m.Identifier == "" {
			t.Fatal("decoded without an identifier")
		}
	} else if !errors.Is(err, devproto.ErrGarbage) {
		t.Fatalf("error %v is not ErrGarbage", err)
	}
	return m, isJSON, err
}

func query(q string) Request { return Request{Method: "GET", RawQuery: q} }

func jsonRequest(body string) Request {
	return Request{Method: "POST", ContentType: "application/json", Body: []byte(body)}
}

func TestOsmAndCorpus(t *testing.T) {
	rows := prototest.LoadCorpus(t)
	raws := prototest.RawRows(t)
	for i, row := range rows {
		is := is.NewRelaxed(t)
		h := row.HTTP
		r := Request{Method: h.Method, RawQuery: h.Query, ContentType: h.Headers["Content-Type"], Body: []byte(h.Body)}
		m, isJSON, err := osmAndDecode(t, r)
		is.Equal(isJSON, strings.HasPrefix(r.ContentType, "application/json"))
		switch row.Expect.HTTPStatus {
		case 200:
			if err != nil {
				t.Errorf("%s: %v", row.Source, err)
				continue
			}
		case 400:
			if err == nil {
				t.Errorf("%s: decoded, want an error (400)", row.Source)
			}
			continue
		default:
			t.Fatalf("%s: http_status %d unknown to the test", row.Source, row.Expect.HTTPStatus)
		}
		prototest.CheckRow(t, row, m)
		is.Equal(len(m.Reply), 0) // 200 with an empty body
		for j, w := range row.Expect.Points {
			if j >= len(m.Positions) {
				break
			}
			p := m.Positions[j]
			prototest.CheckAttrs(t, row.Source, osmAndVocabulary(t, w.Attributes), p)
			raw := prototest.RawPoints(raws[i])[j]
			if v, ok := raw["time"]; ok && v == nil {
				is.Equal(p.Time, prototest.Now) // no timestamp: the server's clock
			}
			if v, ok := raw["course"]; ok && v == nil {
				is.True(!p.HasHeading) // heading −1: unknown
			}
			if v, ok := raw["accuracy_m"].(float64); ok {
				prototest.CheckAttrs(t, row.Source, map[string]any{"accuracy_m": v}, p)
			}
		}
	}
}

// osmAndVocabulary is a corpus row's attributes, which are Traccar's
// names and units, in the common vocabulary (API.md §14): batteryLevel
// is battery_level, odometer (m) odometer_km, the others snake_case.
func osmAndVocabulary(t *testing.T, traccar map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range traccar {
		switch k {
		case "batteryLevel":
			k = "battery_level"
		case "odometer":
			k, v = "odometer_km", v.(float64)/1000
		default:
			name, ok := devproto.SnakeCase(k)
			if !ok {
				t.Fatalf("corpus attribute %q has no name in snake_case", k)
			}
			k = name
		}
		out[k] = v
	}
	return out
}

func TestOsmAndTimestamps(t *testing.T) {
	for _, c := range []struct {
		value string
		want  time.Time
	}{
		{"1377177267", time.Date(2013, 8, 22, 13, 14, 27, 0, time.UTC)},
		{"1442068686579", time.Date(2015, 9, 12, 14, 38, 6, 579e6, time.UTC)},
		{"2147483646", time.Unix(2147483646, 0).UTC()},   // below 2^31−1: seconds
		{"2147483647", time.UnixMilli(2147483647).UTC()}, // from 2^31−1 on: milliseconds
		{"2016-01-27T18%3A55%3A47Z", time.Date(2016, 1, 27, 18, 55, 47, 0, time.UTC)},
		{"2016-01-27T18:55:47.123%2B02:00", time.Date(2016, 1, 27, 16, 55, 47, 123e6, time.UTC)},
		{"2016-01-27T18:55:47", time.Date(2016, 1, 27, 18, 55, 47, 0, time.UTC)}, // no zone: UTC
		{"2014-06-04+09%3A10%3A11", time.Date(2014, 6, 4, 9, 10, 11, 0, time.UTC)},
	} {
		is := is.New(t)
		m, _, err := osmAndDecode(t, query("id=1&lat=60&lon=30&timestamp="+c.value))
		is.NoErr(err)
		is.Equal(m.Positions[0].Time, c.want)
	}
	// Written times that cannot exist: TestOsmAndImpossibleTimesAreNoFix.
	for _, bad := range []string{"yesterday", "99999999999999999999", "-9223372036854775808"} {
		_, _, err := osmAndDecode(t, query("id=1&lat=60&lon=30&timestamp="+bad))
		if err == nil {
			t.Errorf("timestamp %q: decoded, want an error", bad)
		}
	}
}

func TestOsmAndIdentifierIsRequired(t *testing.T) {
	is := is.New(t)
	_, isJSON, err := osmAndDecode(t, query("timestamp=1377177267&lat=60.0&lon=30.0"))
	is.True(err != nil)
	is.True(!isJSON) // answered 400
	_, isJSON, err = osmAndDecode(t, jsonRequest(`{"location":{"coords":{"latitude":1,"longitude":2}}}`))
	is.True(err != nil)
	is.True(isJSON)
	for _, q := range []string{"id=", "id=a%20b", "deviceid=" + strings.Repeat("1", 33)} {
		_, _, err := osmAndDecode(t, query(q+"&lat=60&lon=30"))
		is.True(err != nil) // not an identifier
	}
	m, _, err := osmAndDecode(t, query("deviceid=abc-1.2_3&lat=60&lon=30"))
	is.NoErr(err)
	is.Equal(m.Identifier, "abc-1.2_3")
}

func TestOsmAndFormBody(t *testing.T) {
	is := is.New(t)
	r := Request{Method: "POST", ContentType: "application/x-www-form-urlencoded", Body: []byte("id=123456&lat=60.5&lon=30.25&timestamp=1377177267")}
	m, _, err := osmAndDecode(t, r)
	is.NoErr(err)
	is.Equal(m.Identifier, "123456")
	is.Equal(m.Positions[0].Latitude, 60.5)

	// Parameters in the URL: the body is not read.
	r.RawQuery = "id=654321&lat=1&lon=2"
	m, _, err = osmAndDecode(t, r)
	is.NoErr(err)
	is.Equal(m.Identifier, "654321")
	is.Equal(m.Positions[0].Latitude, 1.0)
}

func TestOsmAndParameters(t *testing.T) {
	is := is.New(t)
	m, _, err := osmAndDecode(t, query("id=1&location=60.5,-30.25&speed=10&bearing=90&altitude=120.5&accuracy=4&hdop=0.9&batt=87&charge=true&driverUniqueId=D42&cell=257,02,16,2224&wifi=00-14-22-01-23-45,-80&notificationToken=x&timestamp=1377177267"))
	is.NoErr(err)
	is.Equal(m.Kind, devproto.KindPositions)
	p := m.Positions[0]
	is.Equal(p.Latitude, 60.5)
	is.Equal(p.Longitude, -30.25)
	is.True(p.HasSpeed && math.Abs(p.Speed-18.52) < 1e-9) // knots
	is.True(p.HasHeading && p.Heading == 90)
	is.True(p.HasAltitude && p.Altitude == 120.5)
	is.True(p.Valid)
	prototest.CheckAttrs(t, "parameters", map[string]any{"accuracy_m": 4.0, "hdop": 0.9, "battery_level": 87.0, "charging": true, "driver_identifier": "D42"}, p)
	is.Equal(len(p.Attrs), 5) // cell, wifi and the token are read past

	for v, valid := range map[string]bool{"true": true, "TRUE": true, "1": true, "false": false, "0": false, "no": false} {
		m, _, err := osmAndDecode(t, query("id=1&lat=1&lon=2&valid="+v))
		is.NoErr(err)
		is.Equal(m.Positions[0].Valid, valid)
	}
}

func TestOsmAndOtherParametersAreAttributes(t *testing.T) {
	is := is.New(t)
	m, _, err := osmAndDecode(t, query("id=1&lat=1&lon=2&ignition=true&rpm=934&fuel=24.5&name=my+truck&ratio=NaN&flag=false&empty=&big=1e999"))
	is.NoErr(err)
	var names []string
	for _, a := range m.Positions[0].Attrs {
		names = append(names, a.Name())
	}
	is.Equal(names, []string{"ignition", "rpm", "fuel", "name", "ratio", "flag", "big"}) // in order; the empty one left out
	prototest.CheckAttrs(t, "attributes", map[string]any{
		"ignition": true, "rpm": 934.0, "fuel": 24.5, "name": "my truck",
		"ratio": "NaN", "flag": false, "big": "1e999", // what is not a finite number stays a string
	}, m.Positions[0])
}

func TestOsmAndWithoutCoordinates(t *testing.T) {
	is := is.New(t)
	for _, r := range []Request{
		query("id=123456&timestamp=1377177267&cell=257,02,16,2224"),
		query("id=123456&lat=60"),
		jsonRequest(`{"device_id":"123456","location":{"timestamp":"2025-06-15T13:45:12.862Z","event":"heartbeat"}}`),
	} {
		m, _, err := osmAndDecode(t, r)
		is.NoErr(err)
		is.Equal(m.Kind, devproto.KindOther) // answered 200, and nothing stored
		is.Equal(m.Identifier, "123456")
		is.Equal(len(m.Positions), 0)
	}
}

func TestOsmAndJSON(t *testing.T) {
	is := is.New(t)
	m, isJSON, err := osmAndDecode(t, jsonRequest(`{"location":{"extras":{"nested":{"a":1},"list":[1],"nothing":null,"alarm":"x","n":7},
		"mock":true,"alarm":"sos","coords":{"speed":-1,"longitude":-122.406417,"latitude":37.785834000000001,"accuracy":-1,"altitude":-1,"heading":-1},
		"is_moving":true,"odometer":1234.9,"battery":{"level":-1,"is_charging":true},"activity":{"type":"walking"},"timestamp":"2025-05-09T04:11:30.579Z"},
		"device_id":"658765"}`))
	is.NoErr(err)
	is.True(isJSON)
	is.Equal(m.Identifier, "658765")
	p := m.Positions[0]
	is.Equal(p.Time, time.Date(2025, 5, 9, 4, 11, 30, 579e6, time.UTC))
	is.Equal(p.Latitude, 37.785834)
	is.True(!p.HasSpeed && !p.HasHeading) // −1: unknown
	is.True(p.HasAltitude)                // an altitude of −1 m is one
	_, ok := prototest.Attr(p, "accuracy_m")
	is.True(!ok)
	_, ok = prototest.Attr(p, "battery_level")
	is.True(!ok)
	prototest.CheckAttrs(t, "json", map[string]any{"mock": true, "alarm": "sos", "motion": true, "odometer_km": 1.234, "charging": true, "activity": "walking", "n": 7.0}, p)
	for _, skipped := range []string{"nested", "list", "nothing"} {
		_, ok := prototest.Attr(p, skipped)
		is.True(!ok) // objects, arrays and nulls are read past
	}

	// The device_id may be a number; a speed is in m/s.
	m, _, err = osmAndDecode(t, jsonRequest(`{"device_id":8737767034,"location":{"timestamp":"2021-07-21T08:06:34.444Z","coords":{"latitude":-6.1,"longitude":106.6,"speed":10}}}`))
	is.NoErr(err)
	is.Equal(m.Identifier, "8737767034")
	is.Equal(m.Positions[0].Speed, 36.0)

	// Content-Type with parameters, in any case.
	r := jsonRequest(`{"device_id":"1","location":{"coords":{"latitude":1,"longitude":2}}}`)
	r.ContentType = "Application/JSON; charset=utf-8"
	_, isJSON, err = osmAndDecode(t, r)
	is.NoErr(err)
	is.True(isJSON)
}

func TestOsmAndRefusesBadRequests(t *testing.T) {
	var many []string
	for i := range maxParams + 1 {
		many = append(many, fmt.Sprintf("k%d=%d", i, i))
	}
	for name, r := range map[string]Request{
		"latitude not a number":  query("id=1&lat=abc&lon=2"),
		"latitude out of range":  query("id=1&lat=91&lon=2"),
		"longitude out of range": query("id=1&lat=1&lon=-180.5"),
		"location of one value":  query("id=1&location=60"),
		"speed overflows":        query("id=1&lat=1&lon=2&speed=1e308"),
		"bad escape":             query("id=1&lat=1&lon=2&note=%zz"),
		"too many parameters":    query("id=1&lat=1&lon=2&" + strings.Join(many, "&")),
		"name too long":          query("id=1&lat=1&lon=2&" + strings.Repeat("k", maxKey+1) + "=1"),
		"value too long":         query("id=1&lat=1&lon=2&note=" + strings.Repeat("v", maxValue+1)),
		"control byte in a name": query("id=1&lat=1&lon=2&a%01b=1"),
		"body too large":         {Method: "POST", Body: make([]byte, MaxBody+1)},
		"JSON not JSON":          jsonRequest(`{"device_id":"1",`),
		"JSON without location":  jsonRequest(`{"device_id":"1"}`),
		"JSON coords half":       jsonRequest(`{"device_id":"1","location":{"coords":{"latitude":1}}}`),
		"JSON event a number":    jsonRequest(`{"device_id":"1","location":{"event":5,"coords":{"latitude":1,"longitude":2}}}`),
		"JSON bad timestamp":     jsonRequest(`{"device_id":"1","location":{"timestamp":"now","coords":{"latitude":1,"longitude":2}}}`),
		"JSON extras an array":   jsonRequest(`{"device_id":"1","location":{"extras":[1],"coords":{"latitude":1,"longitude":2}}}`),
	} {
		t.Run(name, func(t *testing.T) {
			m, _, err := osmAndDecode(t, r)
			if err == nil {
				t.Fatalf("decoded %+v, want an error", m)
			}
		})
	}
}

func TestOsmAndReusesTheMessage(t *testing.T) {
	is := is.New(t)
	var m devproto.Message
	s := devproto.Session{Transport: devproto.HTTP, Now: prototest.Now}
	_, err := Decode(query("id=1&lat=1&lon=2&a=1&b=2&c=3"), &s, &m)
	is.NoErr(err)
	m.Reset()
	_, err = Decode(query("id=2&lat=3&lon=4&d=4"), &s, &m)
	is.NoErr(err)
	is.Equal(len(m.Positions), 1)
	is.Equal(len(m.Positions[0].Attrs), 1) // nothing of the request before
	m.Reset()
	_, err = Decode(query("id=3&lat=100&lon=4&e=5"), &s, &m)
	is.True(err != nil)
	is.Equal(len(m.Positions), 0) // a refused request leaves no position
}

func FuzzOsmAnd(f *testing.F) {
	for _, r := range prototest.RawRows(f) {
		h := r["http"].(map[string]any)
		headers, _ := h["headers"].(map[string]any)
		ct, _ := headers["Content-Type"].(string)
		f.Add(h["query"].(string), ct, []byte(h["body"].(string)))
	}
	for _, row := range prototest.LoadTelematics(f) {
		if row.Protocol == "osmand" {
			f.Add(row.HTTP.Query, row.HTTP.Headers["Content-Type"], []byte(row.HTTP.Body))
		}
	}
	f.Add("id=1&location=60.0,30.0&timestamp=2014-06-04+09%3A10%3A11&rpm=3&x=true&alarm=powerCut,x&ignition=1&fuelRate=2", "", []byte(nil))
	f.Add("", "application/json", []byte(`{"device_id":1,"location":{"extras":{"a":{"b":[1,2]},"c":1e3},"coords":{"latitude":1,"longitude":2,"speed":-1}}}`))
	f.Fuzz(func(t *testing.T, q, contentType string, body []byte) {
		var m devproto.Message
		s := devproto.Session{Transport: devproto.HTTP, Now: prototest.Now}
		_, err := Decode(Request{Method: "POST", RawQuery: q, ContentType: contentType, Body: body}, &s, &m)
		if err != nil {
			if !errors.Is(err, devproto.ErrGarbage) {
				t.Fatalf("error %v is not ErrGarbage", err)
			}
			if len(m.Positions) != 0 {
				t.Fatal("a refused request with a position")
			}
			return
		}
		prototest.CheckDecoded(t, m)
		if m.Identifier == "" || len(m.Positions) > 1 {
			t.Fatalf("identifier %q, %d positions", m.Identifier, len(m.Positions))
		}
	})
}

const (
	osmAndBenchQuery = "id=902064&lat=42.06288&lon=-88.23412&timestamp=1442068686579&hdop=6.0&altitude=224.0&speed=0.0&bearing=12.5&batt=87"
	osmAndBenchJSON  = `{"location":{"event":"motionchange","is_moving":false,"uuid":"0e9a2473-a9a7-4c00-997b-fb97d2154e75","timestamp":"2021-07-21T08:06:34.444Z","odometer":0,"coords":{"latitude":-6.1148096,"longitude":106.6837015,"accuracy":3.8,"speed":18.67,"speed_accuracy":0.26,"heading":63,"heading_accuracy":0.28,"altitude":35.7,"altitude_accuracy":3.8},"activity":{"type":"still","confidence":100},"battery":{"is_charging":false,"level":0.79},"extras":{}},"device_id":"8737767034"}`
)

// osmAndDecoder is a function that decodes r into a message it reuses.
func osmAndDecoder(b *testing.B, r Request) func() {
	var m devproto.Message
	s := devproto.Session{Transport: devproto.HTTP, Now: prototest.Now}
	return func() {
		m.Reset()
		if _, err := Decode(r, &s, &m); err != nil || m.Kind != devproto.KindPositions {
			b.Fatal(err)
		}
	}
}

func benchmarkOsmAnd(b *testing.B, r Request) {
	b.ReportAllocs()
	decode := osmAndDecoder(b, r)
	for b.Loop() {
		decode()
	}
}

func BenchmarkOsmAndQuery(b *testing.B) { benchmarkOsmAnd(b, query(osmAndBenchQuery)) }
func BenchmarkOsmAndJSON(b *testing.B)  { benchmarkOsmAnd(b, jsonRequest(osmAndBenchJSON)) }

// The baselines: what the standard library does to read the same request.
func BenchmarkOsmAndQueryRatio(b *testing.B) {
	prototest.BenchmarkRatio(b, osmAndDecoder(b, query(osmAndBenchQuery)), func() {
		if _, err := url.ParseQuery(osmAndBenchQuery); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkOsmAndJSONRatio(b *testing.B) {
	prototest.BenchmarkRatio(b, osmAndDecoder(b, jsonRequest(osmAndBenchJSON)), func() {
		var v any
		if err := json.Unmarshal([]byte(osmAndBenchJSON), &v); err != nil {
			b.Fatal(err)
		}
	})
}

// TestOsmAndVocabulary: the parameters API.md §14 names map to the common
// vocabulary (alarm words translated, ignition from true/false/1/0, the
// battery, charge, accuracy and driver); any other keeps its name in
// snake_case; a value not of the vocabulary's type, or a name that cannot
// be one, is left out — and the position stays.
func TestOsmAndVocabulary(t *testing.T) {
	is := is.New(t)
	m, _, err := osmAndDecode(t, query("id=1&lat=1&lon=2&alarm=powerCut,sos&ignition=1&motion=FALSE&batt=55&charge=true"+
		"&driverUniqueId=0042&accuracy=12&fuelRate=3.5&power_v=13.8&driver_identifier_x=7&rpm=fast&din1=maybe"+
		"&1st=x&"+url.QueryEscape("ünits")+"=3&Door=true"))
	is.NoErr(err)
	p := m.Positions[0]
	prototest.CheckAttrs(t, "query", map[string]any{
		"alarm": "power_cut,sos", "ignition": true, "motion": false, "battery_level": 55.0, "charging": true,
		"driver_identifier": "0042", "accuracy_m": 12.0, "fuel_rate": 3.5, "power_v": 13.8,
		"driver_identifier_x": 7.0, "door": true,
	}, p)
	for _, dropped := range []string{"rpm", "din1", "1st", "ünits", "units", "fuelRate"} {
		_, ok := prototest.Attr(p, dropped)
		is.True(!ok) // dropped
	}

	// An alarm word with no common name is an alarm all the same.
	m, _, err = osmAndDecode(t, query("id=1&lat=1&lon=2&alarm=geofence"))
	is.NoErr(err)
	prototest.CheckAttrs(t, "general", map[string]any{"alarm": "general"}, m.Positions[0])

	// The JSON form: its alarm, and extras by the same rules.
	m, _, err = osmAndDecode(t, jsonRequest(`{"device_id":"1","location":{"timestamp":"2025-05-09T04:11:30.579Z",
		"coords":{"latitude":1,"longitude":2},"alarm":"lowBattery",
		"extras":{"engineHours":1500.5,"ignition":true,"driver_identifier":12345,"fuel_level":"half","tripName":"north","ok":false}}}`))
	is.NoErr(err)
	p = m.Positions[0]
	prototest.CheckAttrs(t, "json", map[string]any{"alarm": "low_battery", "engine_hours": 1500.5, "ignition": true,
		"driver_identifier": "12345", "trip_name": "north", "ok": false}, p)
	_, ok := prototest.Attr(p, "fuel_level")
	is.True(!ok) // not a number
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

// TestTelematicsRows decodes every row of testdata/telematics.jsonl and
// compares the attributes of the position it names with the row's
// (prototest.CheckTelematicsRows).
func TestTelematicsRows(t *testing.T) {
	prototest.CheckTelematicsRows(t, "osmand", func(t *testing.T, row prototest.TelematicsRow) (string, []devproto.Message) {
		h := row.HTTP
		var m devproto.Message
		s := devproto.Session{Transport: devproto.HTTP, Now: prototest.Now}
		r := Request{Method: h.Method, RawQuery: h.Query, ContentType: h.Headers["Content-Type"], Body: []byte(h.Body)}
		if _, err := Decode(r, &s, &m); err != nil {
			t.Fatalf("decode: %v", err)
		}
		return m.Identifier, []devproto.Message{m}
	})
}

// TestEveryAttributeIsOneTheAPIAccepts decodes every request the tests
// hold — the corpus and the telematics rows — and checks every attribute
// the decoder produced. The fuzz target checks the same of arbitrary
// input.
func TestEveryAttributeIsOneTheAPIAccepts(t *testing.T) {
	names := prototest.AttrNames{}
	for _, row := range prototest.LoadCorpus(t) {
		h := row.HTTP
		var m devproto.Message
		r := Request{Method: h.Method, RawQuery: h.Query, ContentType: h.Headers["Content-Type"], Body: []byte(h.Body)}
		if _, err := Decode(r, &devproto.Session{Transport: devproto.HTTP, Now: prototest.Now}, &m); err == nil {
			names.Add(t, &m)
		}
	}
	for _, row := range prototest.LoadTelematics(t) {
		h := row.HTTP
		var m devproto.Message
		r := Request{Method: h.Method, RawQuery: h.Query, ContentType: h.Headers["Content-Type"], Body: []byte(h.Body)}
		if _, err := Decode(r, &devproto.Session{Transport: devproto.HTTP, Now: prototest.Now}, &m); err != nil {
			t.Fatal(err)
		}
		names.Add(t, &m)
	}
	names.Want(t, "accuracy_m", "battery_level", "event", "hdop", "odometer_km")
}
