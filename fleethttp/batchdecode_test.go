package fleethttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"

	"github.com/matryer/is"
)

var batchSeeds = []string{
	`{"locations":[]}`,
	`{"locations":[{"vehicle_id":"veh_1","latitude":52.5,"longitude":-13.25e1,"timestamp":"2026-11-22T10:00:00Z","speed":0,"heading":359.99,"odometer_km":null}]}`,
	` { "locations" : [ { "latitude" : 1 , "longitude" : 2 , "timestamp" : "2026-11-22T10:00:00.123456+02:00" } ] } `,
	`{"locations":[{"latitude":null,"longitude":2,"timestamp":null,"vehicle_id":null}]}`,
	`{"locations":[{"vehicle_id":"v\u0041","latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"}]}`,
	`{"locations":[{"latitude":"1","longitude":2,"timestamp":"2026-11-22T10:00:00Z"}]}`,
	`{"locations":[{"latitude":1,"longitude":2,"timestamp":"yesterday"}]}`,
	`{"locations":[{"latitude":01,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"}]}`,
	`{"locations":[{"latitude":1e999,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"}]}`,
	`{"locations":[{"latitude":1,"colour":"red"}]}`,
	`{"locations":[{"latitude":1,}]}`,
	`{"locations":[{"latitude":1}],"extra":1}`,
	`{"locations":[{"latitude":1}]} trailing`,
	`{"locations":[{"latitude":1,"latitude":2}]}`,
	`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z","timestamp":"2026-11-22T10:00:00Z"}]}`,
	`{"locations":[],"locations":[]}`,
	`{"locations":null}`,
	`[]`,
	``,
	`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z","attributes":{"ignition":true,"power_v":12.6,"alarm":"sos","motion":false,"io200":0}}]}`,
	`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z","attributes":{}},{"attributes":null},{"attributes": { "b" : -1.5e2 , "a" : "é" } }]}`,
	`{"locations":[{"attributes":{"Fuel Level":1,"note":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","nan":1e999}}]}`,
	`{"locations":[{"attributes":{"x":1,"x":2}}]}`,
	`{"locations":[{"attributes":{"x":[1]}}]}`,
	`{"locations":[{"attributes":{"x":null}}]}`,
	`{"locations":[{"attributes":{"x":{}}}]}`,
	`{"locations":[{"attributes":{"x":tru}}]}`,
	`{"locations":[{"attributes":{"x":true1}}]}`,
	`{"locations":[{"attributes":{"x":"a\nb"}}]}`,
	`{"locations":[{"attributes":{"x":"\u00e9"}}]}`,
	"{\"locations\":[{\"attributes\":{\"x\":\"\xff\"}}]}",
	`{"locations":[{"attributes":{"x":1},"attributes":{"y":2}}]}`,
	`{"locations":[{"attributes":[]}]}`,
	`{"locations":[{"attributes":"x"}]}`,
	`{"locations":[{"attributes":{"x":1,}}]}`,
}

func TestFastBatchDecoderAgreesWithStrict(t *testing.T) {
	for _, seed := range batchSeeds {
		checkAgreement(t, []byte(seed))
	}
	is := is.New(t)
	rps, ok := decodeBatchFast([]byte(batchSeeds[1]))
	is.True(ok) // the common shape takes the fast path
	is.Equal(rps[0].p.VehicleID, "veh_1")
	is.Equal(rps[0].p.Longitude, -132.5)
	is.True(rps[0].hasSpeed && rps[0].speed == 0)
	is.True(!rps[0].hasOd) // null is absent
	_, ok = decodeBatchFast([]byte(batchSeeds[4]))
	is.True(!ok) // escapes go to the strict decoder
	_, ok = decodeBatchFast([]byte(batchSeeds[9]))
	is.True(!ok) // so do unknown members, which it refuses
}

// TestFastBatchDecoderReadsAttributes: a batch whose points carry
// attributes takes the fast path, which reads them as the strict decoder
// does (in the body's order, each point's own, bad names and values left
// for the service to name); what the strict decoder refuses or reads
// otherwise (a name twice, a value of another type, an escape, text that
// is not UTF-8) goes to it.
func TestFastBatchDecoderReadsAttributes(t *testing.T) {
	is := is.New(t)
	fast := func(body string) []rawPoint {
		rps, ok := decodeBatchFast([]byte(body))
		is.True(ok) // the fast path
		strict, err := decodeBatchStrict([]byte(body))
		is.NoErr(err)
		is.Equal(len(rps), len(strict))
		for i := range rps {
			is.Equal(rps[i].p.Attributes, strict[i].p.Attributes) // as the strict decoder reads them
		}
		return rps
	}
	rps := fast(`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z","attributes":{"power_v":12.6,"ignition":true,"alarm":"sos"}},` +
		`{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:01Z","attributes":{"ignition":false}},{"latitude":1}]}`)
	is.Equal(rps[0].p.Attributes, fleet.Attributes{fleet.NumberAttr("power_v", 12.6), fleet.BoolAttr("ignition", true), fleet.TextAttr("alarm", "sos")})
	is.Equal(rps[1].p.Attributes, fleet.Attributes{fleet.BoolAttr("ignition", false)})
	is.Equal(rps[2].p.Attributes, fleet.Attributes(nil))
	rps[0].p.Attributes = append(rps[0].p.Attributes, fleet.BoolAttr("motion", true))
	is.Equal(rps[1].p.Attributes, fleet.Attributes{fleet.BoolAttr("ignition", false)}) // each point's own memory

	// Bad names and values are read, for the service to refuse naming them.
	rps = fast(`{"locations":[{"attributes":{"Fuel Level":1,"note":"` + strings.Repeat("x", 65) + `"}}]}`)
	is.Equal(len(rps[0].p.Attributes), 2)

	for _, body := range []string{
		`{"locations":[{"attributes":{"x":1,"x":2}}]}`,
		`{"locations":[{"attributes":{"x":[1]}}]}`,
		`{"locations":[{"attributes":{"x":null}}]}`,
		`{"locations":[{"attributes":{"x":"a
b"}}]}`,
		`{"locations":[{"attributes":{"x":1e999}}]}`,
		"{\"locations\":[{\"attributes\":{\"x\":\"\xff\"}}]}",
		`{"locations":[{"attributes":{"x":1},"attributes":{"x":1}}]}`,
	} {
		_, ok := decodeBatchFast([]byte(body))
		is.True(!ok) // body: the strict decoder's
	}
}

// checkAgreement: whenever the fast path accepts a body, the strict decoder
// accepts it too, with the same points.
func checkAgreement(t *testing.T, body []byte) {
	t.Helper()
	fast, ok := decodeBatchFast(body)
	if !ok {
		return
	}
	req, err := decode[fleetwire.LocationBatch](body, false)
	if err != nil {
		t.Fatalf("fast path accepted what the strict decoder refuses (%v): %q", err, body)
	}
	if req.Locations == nil || len(req.Locations) != len(fast) {
		t.Fatalf("point counts differ on %q", body)
	}
	for i, p := range req.Locations {
		f := fast[i]
		same := (p.VehicleID != nil) == f.hasVehicle && (p.VehicleID == nil || *p.VehicleID == f.p.VehicleID) &&
			(p.Latitude != nil) == f.hasLat && (p.Latitude == nil || *p.Latitude == f.p.Latitude) &&
			(p.Longitude != nil) == f.hasLon && (p.Longitude == nil || *p.Longitude == f.p.Longitude) &&
			(p.Timestamp != nil) == f.hasTS && (p.Timestamp == nil || p.Timestamp.Equal(f.p.Timestamp)) &&
			(p.Speed != nil) == f.hasSpeed && (p.Speed == nil || *p.Speed == f.speed) &&
			(p.Heading != nil) == f.hasHeading && (p.Heading == nil || *p.Heading == f.heading) &&
			(p.OdometerKm != nil) == f.hasOd && (p.OdometerKm == nil || *p.OdometerKm == f.odo) &&
			reflect.DeepEqual(p.Attributes, f.p.Attributes)
		if !same {
			t.Fatalf("point %d differs between decoders on %q", i, body)
		}
	}
}

// FuzzDecodeBatch: run longer with go test -fuzz FuzzDecodeBatch ./fleethttp/
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range batchSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAgreement(t, body)
		decodeBatch(body) // never panics
	})
}

// A member given twice, in any object at any depth, is refused naming its
// path; names are compared as decoded. The same name in two objects is no
// duplicate.
func TestDuplicateMembersAreRefused(t *testing.T) {
	is := is.New(t)
	many := `{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"}],"x":{`
	for i := range 100 {
		many += `"k` + strconv.Itoa(i) + `":1,`
	}
	many += `"k7":2}}`
	for body, path := range map[string]string{
		`{"locations":[],"locations":[]}`: "locations",
		`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z","latitude":3}]}`:                                             "locations[0].latitude",
		`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"},{"speed":1,"timestamp":"2026-11-22T10:00:00Z","speed":2}]}`: "locations[1].speed",
		`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z","timestamp":"2026-11-22T10:00:01Z"}]}`:                       "locations[0].timestamp",
		`{"locations":[{"vehicle_id":"veh_1","vehicle_\u0069d":"veh_2"}]}`:                                                                         "locations[0].vehicle_id",
		`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"}],"a":[[{"b":{"c":1,"d":[{},{"e":1,"e":1}]}}]]}`:             "a[0][0].b.d[1].e",
		many: "x.k7",
	} {
		_, err := decodeBatch([]byte(body))
		var fe *fleet.Error
		is.True(errors.As(err, &fe))                   // body
		is.Equal(fe.Code, fleet.CodeInvalidRequest)    // body
		is.Equal(len(fe.Details), 1)                   // body
		is.Equal(fe.Details[0].Field, path)            // body
		is.True(strings.Contains(fe.Message, "twice")) // body
	}
	for _, body := range []string{
		`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"},{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z"}]}`,
		`{"locations":[{"latitude":1,"longitude":2,"timestamp":"2026-11-22T10:00:00Z","vehicle_id":"a\"latitude\":"}]}`,
	} {
		_, err := decodeBatch([]byte(body))
		is.NoErr(err) // body
	}
	// The strict decoder of every body refuses them too.
	_, err := decode[fleetwire.CreateKeyRequest]([]byte(`{"name":"k","permissions":["vehicles:read"],"permissions":["*"]}`), false)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
	is.Equal(err.(*fleet.Error).Details[0].Field, "permissions")
}

// batchBody is a bulk batch of n points in the common shape.
func batchBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"locations":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"vehicle_id":"veh_06h1j6fxq5y2k83yv8j36nwt%02d","latitude":%.5f,"longitude":13.40000,"timestamp":"2026-11-22T10:%02d:%02dZ","speed":42.5,"heading":180}`,
			i%100, 52.5+float64(i)/1e5, i/60%60, i%60)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkDecodeBatchAttributes decodes a batch of 1,000 points with 15
// typical attributes each through the fast path and through the strict
// decoder, interleaved: ratio is the fast path's time over the strict
// decoder's.
func BenchmarkDecodeBatchAttributes(b *testing.B) {
	var body strings.Builder
	body.WriteString(`{"locations":[`)
	for i := range 1_000 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"latitude":%.5f,"longitude":13.40000,"timestamp":"2026-11-22T10:%02d:%02dZ","speed":42.5,"heading":180,"attributes":%s}`,
			52.5+float64(i)/1e5, i/60%60, i%60, typicalAttributesJSON(i))
	}
	body.WriteString(`]}`)
	raw := []byte(body.String())
	var tFast, tStrict time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, ok := decodeBatchFast(raw); !ok {
			b.Fatal("not the fast path")
		}
		t1 := time.Now()
		if _, err := decodeBatchStrict(raw); err != nil {
			b.Fatal(err)
		}
		tStrict += time.Since(t1)
		tFast += t1.Sub(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tFast.Nanoseconds())/n, "fast-ns/batch")
	b.ReportMetric(float64(tStrict.Nanoseconds())/n, "strict-ns/batch")
	b.ReportMetric(float64(tFast)/float64(tStrict), "ratio")
}

// typicalAttributesJSON is a tracker's 15 typical attributes as a client
// sends them.
func typicalAttributesJSON(i int) string {
	f := float64(i % 1000)
	return fmt.Sprintf(`{"ignition":true,"motion":%t,"power_v":%g,"battery_v":4.1,"battery_level":97,"odometer_km":%g,"engine_hours":%g,`+
		`"fuel_level":62,"rssi":4,"hdop":0.7,"pdop":1.1,"driver_identifier":"01A2B3C4D5E6F708","din1":true,"io200":0,"rpm":%g}`,
		i%2 == 0, 12.5+f/1000, 123456.789+f/10, 1523.4+f/60, 850+f)
}

// BenchmarkDecodeBatch decodes a bulk batch of 10,000 points through the
// fast path.
func BenchmarkDecodeBatch(b *testing.B) {
	body := batchBody(10_000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, ok := decodeBatchFast(body); !ok {
			b.Fatal("not the fast path")
		}
	}
}

// BenchmarkDecodeBatchPaths decodes the same batch of 10,000 points
// through the fast path and through the strict decoder (decodeBatch's
// fallback, its points converted alike), and the four readings the strict
// decoder replaced (oracleDecode), interleaved: ratio is the fast path's
// time over the strict decoder's (below 1, the fast path pays), and
// strict/oracle the strict decoder's over the four readings'.
func BenchmarkDecodeBatchPaths(b *testing.B) {
	body := batchBody(10_000)
	batchType := reflect.TypeFor[fleetwire.LocationBatch]()
	var tFast, tStrict, tOracle time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, ok := decodeBatchFast(body); !ok {
			b.Fatal("not the fast path")
		}
		t1 := time.Now()
		if _, err := decodeBatchStrict(body); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := oracleDecode(body, batchType, false); err != nil {
			b.Fatal(err)
		}
		tOracle += time.Since(t2)
		tStrict += t2.Sub(t1)
		tFast += t1.Sub(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tFast.Nanoseconds())/n, "fast-ns/batch")
	b.ReportMetric(float64(tStrict.Nanoseconds())/n, "strict-ns/batch")
	b.ReportMetric(float64(tOracle.Nanoseconds())/n, "oracle-ns/batch")
	b.ReportMetric(float64(tFast)/float64(tStrict), "ratio")
	b.ReportMetric(float64(tStrict)/float64(tOracle), "strict/oracle")
}

// duplicateByTokens is the duplicate check's reference: encoding/json's
// tokens, a set of names for each object.
func duplicateByTokens(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // 1e700 is a number to the scanner too
	var walk func(path string) (string, bool, bool)
	walk = func(path string) (string, bool, bool) {
		tok, err := dec.Token()
		if err != nil {
			return "", false, false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return "", false, false
				}
				name := k.(string)
				p := name
				if path != "" {
					p = path + "." + name
				}
				if seen[name] {
					return p, true, true
				}
				seen[name] = true
				if dp, found, ok := walk(p); found || !ok {
					return dp, found, ok
				}
			}
			_, err := dec.Token()
			return "", false, err == nil
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if dp, found, ok := walk(path + "[" + strconv.Itoa(i) + "]"); found || !ok {
					return dp, found, ok
				}
			}
			_, err := dec.Token()
			return "", false, err == nil
		}
		return "", false, true
	}
	p, found, _ := walk("")
	return p, found
}

// FuzzDuplicateMember: on any valid JSON object in UTF-8, the strict decoder
// finds the member given twice that encoding/json's tokens show, at the
// same path.
func FuzzDuplicateMember(f *testing.F) {
	for _, s := range batchSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":{"b":[1,{"c":2,"\u0063":3}]}}`))
	f.Add([]byte(`[{"a":1},{"a":1,"b":{"a":1}}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) || !utf8.Valid(body) { // what readBody lets through
			return
		}
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return // a body is an object
		}
		want, wantFound := duplicateByTokens(body)
		// A struct without members: the member given twice outranks
		// every unknown member.
		_, err := decode[struct{}](body, false)
		if err != nil && !strings.Contains(err.Error(), "given twice") {
			err = nil
		}
		if (err != nil) != wantFound {
			t.Fatalf("%q: found %v, want %v (%s)", body, err, wantFound, want)
		}
		if err != nil && err.(*fleet.Error).Details[0].Field != want {
			t.Fatalf("%q: names %s, want %s", body, err.(*fleet.Error).Details[0].Field, want)
		}
	})
}
