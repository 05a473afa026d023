package fleet_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestAttributesAreAJSONObjectInNameOrder(t *testing.T) {
	is := is.New(t)
	a := fleet.Attributes{fleet.NumberAttr("power_v", 12.6), fleet.BoolAttr("ignition", true), fleet.TextAttr("alarm", "sos,tow"),
		fleet.NumberAttr("tiny", 1e-7), fleet.NumberAttr("big", 1e21), fleet.TextAttr("quote", `a "b" \ é`)}.Sort()
	b, err := json.Marshal(a)
	is.NoErr(err)
	is.Equal(string(b), `{"alarm":"sos,tow","big":1e+21,"ignition":true,"power_v":12.6,"quote":"a \"b\" \\ é","tiny":1e-7}`)
	var back fleet.Attributes
	is.NoErr(json.Unmarshal(b, &back))
	is.Equal(back.Sort(), a) // the same attributes again
	v, ok := back.Number("power_v")
	is.True(ok)
	is.Equal(v, 12.6)
	on, ok := back.Bool("ignition")
	is.True(ok && on)
	_, ok = back.Number("ignition") // a flag is not a number
	is.True(!ok)
	s, _ := back.Text("alarm")
	is.Equal(s, "sos,tow")

	// A point without attributes leaves the member out.
	pb, err := json.Marshal(fleet.Point{Latitude: 1, Longitude: 2, Timestamp: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)})
	is.NoErr(err)
	is.True(!strings.Contains(string(pb), "attributes"))

	// A value of another type is a wrong type (400), naming it.
	for _, body := range []string{`{"x":null}`, `{"x":[1]}`, `{"x":{"y":1}}`, `[1]`} {
		err := json.Unmarshal([]byte(body), &back)
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest) // body
	}
}

func TestAttributesGetFindsEveryNameAmongMany(t *testing.T) {
	is := is.New(t)
	var a fleet.Attributes
	for i := range 40 {
		a = append(a, fleet.NumberAttr("io"+strconv.Itoa(i), float64(i)))
	}
	a = a.Sort()
	for i := range 40 {
		v, ok := a.Number("io" + strconv.Itoa(i))
		is.True(ok)
		is.Equal(v, float64(i))
	}
	_, ok := a.Get("io40")
	is.True(!ok)
}

// TestBadAttributesAre422NamingPointAndAttribute: a point with 65
// attributes, a name with a capital or a space, a NaN, a 65-character
// string, a control character: 422 naming the point and the attribute,
// and nothing of the batch stored.
func TestBadAttributesAre422NamingPointAndAttribute(t *testing.T) {
	svc, clock := newService(t)
	is := is.New(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck"})
	is.NoErr(err)
	at := clock.Now().Add(-time.Hour)
	good := fleet.Point{Latitude: 52, Longitude: 13, Timestamp: at, Attributes: fleet.Attributes{fleet.BoolAttr("ignition", true)}}
	many := make(fleet.Attributes, 65)
	for i := range many {
		many[i] = fleet.NumberAttr("a"+strconv.Itoa(i), 1)
	}
	cases := []struct {
		attrs   fleet.Attributes
		field   string
		message string
	}{
		{many, "locations[1].attributes", "at most 64"},
		{fleet.Attributes{fleet.NumberAttr("Fuel", 1)}, "locations[1].attributes[\"Fuel\"]", "not a valid attribute name"},
		{fleet.Attributes{fleet.NumberAttr("fuel level", 1)}, "locations[1].attributes[\"fuel level\"]", "not a valid attribute name"},
		{fleet.Attributes{fleet.NumberAttr(strings.Repeat("a", 33), 1)}, "locations[1].attributes[\"" + strings.Repeat("a", 33) + "\"]", "not a valid attribute name"},
		{fleet.Attributes{fleet.NumberAttr("fuel_l", math.NaN())}, "locations[1].attributes.fuel_l", "finite"},
		{fleet.Attributes{fleet.NumberAttr("fuel_l", math.Inf(1))}, "locations[1].attributes.fuel_l", "finite"},
		{fleet.Attributes{fleet.TextAttr("note", strings.Repeat("é", 65))}, "locations[1].attributes.note", "at most 64 characters"},
		{fleet.Attributes{fleet.TextAttr("note", "a\nb")}, "locations[1].attributes.note", "control characters"},
		{fleet.Attributes{fleet.NumberAttr("x", 1), fleet.NumberAttr("x", 2)}, "locations[1].attributes.x", "more than once"},
	}
	for _, c := range cases {
		bad := fleet.Point{Latitude: 52, Longitude: 13, Timestamp: at.Add(time.Second), Attributes: c.attrs}
		_, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{good, bad})
		is.Equal(fleet.ErrorCode(err), fleet.CodeValidation) // c.field
		var fe *fleet.Error
		is.True(asError(err, &fe))
		is.Equal(len(fe.Details), 1)
		is.Equal(fe.Details[0].Field, c.field)
		is.True(strings.Contains(fe.Details[0].Message, c.message)) // c.message
	}
	// Exactly the limits pass, and what passed is stored with its points.
	edge := make(fleet.Attributes, 64)
	for i := range edge {
		edge[i] = fleet.TextAttr("a"+strconv.Itoa(i), strings.Repeat("é", 64))
	}
	edge[0] = fleet.NumberAttr(strings.Repeat("z", 32), -0.5)
	res, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{good, {Latitude: 52, Longitude: 13, Timestamp: at.Add(time.Second), Attributes: edge}})
	is.NoErr(err)
	is.Equal(res.Accepted, 2)
}

func TestAttributesBinaryFormRoundTripsAndIsCompact(t *testing.T) {
	is := is.New(t)
	typical := fleet.Attributes{
		fleet.BoolAttr("ignition", true), fleet.BoolAttr("motion", false), fleet.NumberAttr("power_v", 12.634),
		fleet.NumberAttr("battery_v", 4.1), fleet.NumberAttr("battery_level", 97), fleet.NumberAttr("odometer_km", 123456.789),
		fleet.NumberAttr("engine_hours", 1523.4), fleet.NumberAttr("fuel_level", 62), fleet.NumberAttr("rssi", 4),
		fleet.NumberAttr("hdop", 0.7), fleet.NumberAttr("pdop", 1.1), fleet.TextAttr("driver_identifier", "01A2B3C4D5E6F708"),
		fleet.BoolAttr("din1", true), fleet.NumberAttr("io200", 0), fleet.NumberAttr("rpm", 850),
	}.Sort()
	b, err := typical.AppendBinary(nil)
	is.NoErr(err)
	is.True(len(b) <= 70) // 15 typical attributes in a few bytes each
	var back fleet.Attributes
	is.NoErr(back.UnmarshalBinary(b))
	is.Equal(back, typical)

	odd := fleet.Attributes{fleet.NumberAttr("a_custom_name", math.Pi), fleet.NumberAttr("big", 1e300), fleet.NumberAttr("io007", -1.5),
		fleet.NumberAttr("neg", -12.25), fleet.NumberAttr("tiny", 1e-9), fleet.TextAttr("note", "é\"x"), fleet.TextAttr("empty", "")}.Sort()
	b, err = odd.AppendBinary(nil)
	is.NoErr(err)
	is.NoErr(back.UnmarshalBinary(b))
	is.Equal(back, odd)

	none, err := fleet.Attributes(nil).AppendBinary(nil)
	is.NoErr(err)
	is.Equal(len(none), 0) // stored as NULL
	is.NoErr(back.UnmarshalBinary(nil))
	is.Equal(back, fleet.Attributes(nil))

	// Cut or foreign bytes are an error, never a panic.
	full, _ := typical.AppendBinary(nil)
	for i := 1; i < len(full); i++ {
		_ = back.UnmarshalBinary(full[:i])
	}
	is.True(back.UnmarshalBinary([]byte{9, 1, 2}) != nil)
}

// TestPointAppendJSONIsEncodingJSONs: a point written by AppendJSON is
// byte for byte what encoding/json writes, whatever its values.
func TestPointAppendJSONIsEncodingJSONs(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 22, 10, 15, 30, 250_000_000, time.UTC)
	f := func(v float64) *float64 { return &v }
	pts := []fleet.Point{
		{Latitude: 52.520008, Longitude: 13.404954, Timestamp: at},
		{Latitude: -0.000001, Longitude: 179.9999999, Timestamp: at.Add(750 * time.Millisecond), Speed: f(0), Heading: f(359.99), OdometerKm: f(1e7)},
		{Latitude: 1e-7, Longitude: -1e-9, Timestamp: at.Add(time.Microsecond), Speed: f(123.456), OdometerKm: f(99999999.999),
			Attributes: fleet.Attributes{fleet.TextAttr("alarm", "sos,tow"), fleet.NumberAttr("big", 1e21), fleet.TextAttr("esc", `"<é>"\`),
				fleet.BoolAttr("ignition", false), fleet.NumberAttr("tiny", -1.5e-7)}},
	}
	for _, p := range pts {
		want, err := json.Marshal(p)
		is.NoErr(err)
		is.Equal(string(p.AppendJSON(nil)), string(want))
	}
}

// TestAttributeNumbersAreEncodingJSONs: every number is written as
// encoding/json writes a float64.
func TestAttributeNumbersAreEncodingJSONs(t *testing.T) {
	is := is.New(t)
	vals := []float64{0, 1, -1, 0.5, 0.05, 0.005, 0.001, 0.0001, 12.634, -12.634, 123456.789, 1e11 + 0.125, 999999999999.999,
		1e12, 1e15, 1e20, 1e21, 1e-6, 1e-7, math.Pi, -math.E, 100, 1000.1, 0.1 + 0.2, 4.1, 97, 850.25, -0.015,
		// Either side of the scaled integers' 15 digits, and of their 2^50.
		999999999999999, -999999999999999, 99999999999999.9, 999999999999.999, 1e15 + 1, 1e14 + 0.5, 1<<50 - 1, -(1<<50 - 1),
		(1<<50 - 1) / 1000.0, 1<<50 + 1, 112589990684262.3}
	for i := range 2000 {
		vals = append(vals, float64(i)*0.017-13, float64(i*i)/7, float64(i)/1000)
	}
	// Decimals of up to 17 significant digits at every scale, and the
	// float64s either side of each: the shortest form of some is the
	// decimal, of others not.
	rng := rand.New(rand.NewPCG(36, 1))
	for range 20_000 {
		digits := 1 + rng.IntN(17)
		n := rng.Int64N(int64(math.Pow10(digits)))
		v := float64(n) / math.Pow10(rng.IntN(25)) * math.Pow10(rng.IntN(8))
		if rng.IntN(2) == 0 {
			v = -v
		}
		vals = append(vals, v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)))
	}
	for _, v := range vals {
		want, err := json.Marshal(v)
		is.NoErr(err)
		got, err := json.Marshal(fleet.Attributes{fleet.NumberAttr("x", v)})
		is.NoErr(err)
		is.Equal(string(got), `{"x":`+string(want)+`}`) // v
		// Written from the binary form (as a scaled integer or its eight
		// bytes): the same.
		bin, err := fleet.Attributes{fleet.NumberAttr("x", v)}.AppendBinary(nil)
		is.NoErr(err)
		got, err = fleet.AppendAttributesJSON(nil, bin)
		is.NoErr(err)
		is.Equal(string(got), `{"x":`+string(want)+`}`) // v from its binary form
	}
}

// FuzzAttributeNumberIsEncodingJSONs: any finite number is written as
// encoding/json writes a float64.
func FuzzAttributeNumberIsEncodingJSONs(f *testing.F) {
	for _, v := range []float64{0, 12.634, -0.015, 1e12 - 0.001, 999999999999.999, 0.1 + 0.2, 1e21, 1e-7, 123456.789 + 0.1} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(fleet.Attributes{fleet.NumberAttr("x", v)})
		if string(got) != `{"x":`+string(want)+`}` {
			t.Fatalf("%v written as %s, encoding/json writes %s", v, got, want)
		}
		bin, _ := fleet.Attributes{fleet.NumberAttr("x", v)}.AppendBinary(nil)
		if got, _ := fleet.AppendAttributesJSON(nil, bin); string(got) != `{"x":`+string(want)+`}` {
			t.Fatalf("%v written from its binary form as %s, encoding/json writes %s", v, got, want)
		}
	})
}

// TestAttributeBlobsDecodeAPageAsEachPointAlone: a page of points decoded
// together reads as each point decoded alone, points without attributes
// included, and appending to one point's attributes changes no other's.
func TestAttributeBlobsDecodeAPageAsEachPointAlone(t *testing.T) {
	is := is.New(t)
	var blobs fleet.AttributeBlobs
	var want []fleet.Attributes
	for i := range 50 {
		a := fleet.Attributes{fleet.NumberAttr("power_v", 12+float64(i)/1000), fleet.TextAttr("driver_identifier", "D"+strconv.Itoa(i)),
			fleet.NumberAttr("io"+strconv.Itoa(i*37), -float64(i)), fleet.NumberAttr("x_custom", math.Pi*float64(i)), fleet.BoolAttr("ignition", i%2 == 0)}.Sort()
		if i%7 == 3 {
			a = nil
		}
		b, err := a.AppendBinary(nil)
		is.NoErr(err)
		blobs.Add(b)
		clear(b) // Add copied them
		want = append(want, a)
	}
	is.Equal(blobs.Len(), 50)
	for i := range want { // each point written as JSON from its bytes
		js, err := blobs.AppendJSON(nil, i)
		is.NoErr(err)
		is.Equal(string(js), string(want[i].AppendJSON(nil)))
	}
	got, err := blobs.Decode()
	is.NoErr(err)
	is.Equal(got, want)
	is.Equal(blobs.Len(), 0) // forgotten once decoded
	got[0] = append(got[0], fleet.BoolAttr("zz", true))
	is.Equal(got[1], want[1]) // the next point's attributes are untouched

	// A malformed point is an error, never a panic.
	full, _ := want[0].AppendBinary(nil)
	blobs.Add(full[:len(full)-1])
	_, err = blobs.Decode()
	is.True(err != nil)
}

// FuzzAttributesBinary: any bytes decode without a panic, alone and in a
// page, to the same attributes; what decodes writes back to the same
// attributes.
func FuzzAttributesBinary(f *testing.F) {
	typical, _ := fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.NumberAttr("io200", 0), fleet.NumberAttr("io70000", 1.5),
		fleet.TextAttr("driver_identifier", "01A2"), fleet.NumberAttr("big", 1e300), fleet.NumberAttr("neg", -12.25)}.AppendBinary(nil)
	f.Add(typical)
	f.Add([]byte{1, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 4, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		var alone fleet.Attributes
		err := alone.UnmarshalBinary(data)
		var blobs fleet.AttributeBlobs
		blobs.Add(data)
		js, jerr := blobs.AppendJSON([]byte("x"), 0)
		page, perr := blobs.Decode()
		if (err == nil) != (perr == nil) || (err == nil) != (jerr == nil) {
			t.Fatalf("alone: %v, in a page: %v, as JSON: %v", err, perr, jerr)
		}
		if err != nil {
			if string(js) != "x" {
				t.Fatalf("malformed bytes wrote %q", js)
			}
			return
		}
		// Written as JSON from the binary form: what the decoded write.
		if want := alone.AppendJSON([]byte("x")); string(js) != string(want) {
			t.Fatalf("as JSON %s, decoded and written %s", js, want)
		}
		if !attrsEqual(alone, page[0]) {
			t.Fatalf("alone %v, in a page %v", alone, page[0])
		}
		b, _ := alone.AppendBinary(nil)
		var back fleet.Attributes
		if err := back.UnmarshalBinary(b); err != nil || !attrsEqual(back, alone) {
			t.Fatalf("%v written and read back: %v (%v)", alone, back, err)
		}
	})
}

// attrsEqual compares attributes, a NaN equal to a NaN.
func attrsEqual(x, y fleet.Attributes) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		a, b := x[i], y[i]
		if a.Name != b.Name || a.Kind != b.Kind || a.Text != b.Text || !(a.Num == b.Num || math.IsNaN(a.Num) && math.IsNaN(b.Num)) {
			return false
		}
	}
	return true
}
