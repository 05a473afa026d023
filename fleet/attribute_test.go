package fleet_test

import (
	"encoding/json"
	"math"
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
