package fleethttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
	"github.com/matryer/is"
)

// kindsBody has a member of every kind the strict decoder reads itself
// and of those it leaves to encoding/json, so that the fuzz target compares
// them all with the oracle, beside the API's own body types.
type kindsBody struct {
	Name    string                      `json:"name"`
	Small   int8                        `json:"small"`
	Count   int                         `json:"count"`
	Unsgn   uint16                      `json:"unsigned"`
	F32     float32                     `json:"f32"`
	F64     *float64                    `json:"f64"`
	Flag    *bool                       `json:"flag"`
	Any     any                         `json:"any"`
	Pair    [2]int                      `json:"pair"`
	Free    map[string]any              `json:"free"`
	Nested  []kindsNested               `json:"nested"`
	When    *time.Time                  `json:"when"`
	At      time.Time                   `json:"at"`
	Raw     json.RawMessage             `json:"raw"`
	Data    fleetwire.JSONObject        `json:"data"`
	Shape   *fleet.Geometry             `json:"shape"`
	Opt     fleet.Optional[kindsNested] `json:"opt"`
	OptInt  fleet.Optional[*int]        `json:"opt_int"`
	OptList fleet.Optional[[]string]    `json:"opt_list"`
	Bytes   []byte                      `json:"bytes"`
	Grid    [][]float64                 `json:"grid"`
	Skipped string                      `json:"-"`
	NoTag   string
	kindsEmbedded
	*KindsPointerEmbedded
}

type kindsNested struct {
	Label string    `json:"label"`
	Level *int      `json:"level"`
	Tags  []string  `json:"tags"`
	At    time.Time `json:"at"`
}

type kindsEmbedded struct {
	Inner string `json:"inner"`
}

// KindsPointerEmbedded is embedded through a pointer (exported, as
// encoding/json needs to allocate it).
type KindsPointerEmbedded struct {
	Deep int `json:"deep"`
}

// bodyTypes are the types the fuzz target decodes: every route's request
// body type, read from the route table (a new route's type is fuzzed
// without a change here), and kindsBody.
func bodyTypes() []reflect.Type {
	seen := map[reflect.Type]bool{}
	out := []reflect.Type{reflect.TypeFor[kindsBody](), reflect.TypeFor[struct{}]()}
	for _, rt := range (&Handler{}).routeTable() {
		if rt.doc.in == nil {
			continue
		}
		t := reflect.TypeOf(rt.doc.in)
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

var strictSeeds = []string{
	`{}`, ` {} `, `{} x`, `{}{}`, `{`, `{"name":"a"}`, `{"name":1}`, `[]`, `null`, `{"name":"a","name":"b"}`,
	`{"permissions":["*"],"expires_at":"2026-01-01T00:00:00Z"}`, `{"permissions":["vehicles:read"],"permissions":["*"]}`,
	`{"grace_period_seconds":-1}`, `{"name":"x","tags":[1]}`, `{"year":1e400}`, "{\"name\":\"\xff\"}",
	`{"vehicle_id":"veh_x","title":"t","due_date":"2026-02-30","cost_cents":1e3}`, `{"interval_km":-0,"last_service_date":null}`,
	`{"url":"https://h/x","events":["*",1]}`, `{"geometry":{"type":"Point","coordinates":[0,0]},"radius_m":5}`, `{"data":[]}`,
	`{"geometry":{"type":"Square"}}`, `{"geometry":null}`, `{"geometry":[1]}`, `{"name":"a","NAME":"b"}`,
	`{"b":1,"a":"x"}`, `{"z":{"y":1},"a":{"b":2}}`, `{"name":"\u0061\ud800"}`, `{"n\u0061me":"a","name":"b"}`,
	`{"small":300}`, `{"small":-128,"count":9223372036854775808}`, `{"unsigned":-1}`, `{"unsigned":70000}`, `{"unsigned":"1"}`,
	`{"f32":1e39}`, `{"f64":-0,"flag":true}`, `{"flag":"yes"}`, `{"any":{"a":[1,2,{"b":null}]}}`, `{"any":1e400}`,
	`{"pair":[1,2,3]}`, `{"pair":[1]}`, `{"pair":{}}`, `{"pair":["a"]}`, `{"free":{"a":1,"b":[true]}}`, `{"free":[]}`,
	`{"nested":[{"label":"a","level":2,"tags":["x"],"at":"2026-11-22T10:15:30Z"},{"label":3}]}`,
	`{"nested":[{"level":1.5},{"tags":{}}]}`, `{"nested":[{"x":1},{"label":1}]}`, `{"nested":null}`, `{"nested":[]}`,
	`{"when":"2026-11-22T10:15:30+02:00","at":"2026-11-22T10:15:30.5Z"}`, `{"at":"2026-11-22 10:15:30Z"}`, `{"at":5}`,
	`{"at":"2026-11-22T10:15:30\u005a"}`, `{"at":"2026-11-22T24:00:00Z"}`, `{"at":"2026-11-22T10:15:30.Z"}`, `{"at":null,"when":null}`,
	`{"raw":{"a":1,"a":2}}`, `{"raw":[1,"x"]}`, `{"raw":null}`, `{"data":{"k":"v"}}`, `{"data":"x"}`, `{"data":null}`,
	`{"shape":{"type":"Point","coordinates":[1,2]}}`, `{"shape":{"type":"Point"}}`, `{"shape":null}`,
	`{"opt":{"label":"a"}}`, `{"opt":null}`, `{"opt":{"label":1}}`, `{"opt":{"nope":1}}`, `{"opt_int":null}`, `{"opt_int":7}`,
	`{"opt_int":"7"}`, `{"opt_list":["a"]}`, `{"opt_list":[1]}`, `{"bytes":[1,2]}`, `{"bytes":"AQI="}`, `{"bytes":[300]}`,
	`{"grid":[[1,2],[3]]}`, `{"grid":[[1,"a"]]}`, `{"Skipped":"x"}`, `{"NoTag":"x"}`, `{"notag":"x"}`, `{"inner":"i","deep":3}`,
	`{"kindsEmbedded":{}}`, `{"name":"a",}`, `{"name":"a" "b":1}`, `{"name":tru}`, `{"count":01}`, `{"count":1.}`, `{"count":-}`,
	`{"name":"a\x01"}`, `{"name":"\q"}`, `{"name":"\u12"}`, `{"a":1,"a":2,"b":[}`, `{"x":1,"name":2}`, `{"name":2,"x":1}`,
	`{"nested":[{"label":1}],"name":2}`, `{"small":1e2}`, `{"count":-0}`, `{"":1}`, `{"":{"a":1,"a":2}}`,
	`{"locations":[{"vehicle_id":"veh_1","latitude":52.5,"longitude":13.4,"timestamp":"2026-11-22T10:00:00Z"}]}`,
	`{"locations":[{"latitude":"1"},{"longitude":"x","latitude":true}]}`,
	strings.Repeat("[", 10001), `{"any":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"any":` + strings.Repeat("[", 10000) + `]}`,
}

// FuzzStrictDecoderMatchesOracle: for every body type, the one-pass
// strict decoder gives what the four readings it replaced gave
// (oracleDecode): the same error (code, message and details, so the same
// fault named first), or the same value.
func FuzzStrictDecoderMatchesOracle(f *testing.F) {
	for _, s := range strictSeeds {
		f.Add([]byte(s))
	}
	types := bodyTypes()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, typ := range types {
			got := reflect.New(typ).Elem()
			err := decodeValue(body, false, got)
			want, wantErr := oracleDecode(body, typ, false)
			if !sameError(err, wantErr) {
				t.Fatalf("%s from %q:\n got %s\nwant %s", typ, body, describe(err), describe(wantErr))
			}
			if err == nil && !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Fatalf("%s from %q:\n got %#v\nwant %#v", typ, body, got.Interface(), want.Interface())
			}
		}
	})
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var fa, fb *fleet.Error
	if errors.As(a, &fa) && errors.As(b, &fb) {
		return fa.Code == fb.Code && fa.Message == fb.Message && reflect.DeepEqual(fa.Details, fb.Details)
	}
	return a.Error() == b.Error()
}

func describe(err error) string {
	var fe *fleet.Error
	if errors.As(err, &fe) {
		return fmt.Sprintf("%s: %s %v", fe.Code, fe.Message, fe.Details)
	}
	return fmt.Sprint(err)
}

// The fault named is the one of the first member by name, depth first,
// whatever the order of the text; a member given twice outranks it, and
// malformed JSON outranks both.
func TestStrictDecoderRanksFaults(t *testing.T) {
	is := is.New(t)
	msg := func(body string) string {
		_, err := decode[kindsBody]([]byte(body), false)
		if err == nil {
			return ""
		}
		return err.(*fleet.Error).Message
	}
	is.Equal(msg(`{"small":"x","count":"y"}`), `Field "count" must be a whole number.`)
	is.Equal(msg(`{"nested":[{"label":1},{"level":"x"}],"at":5}`), `Field "at" must be an RFC 3339 timestamp (2026-11-22T10:15:30Z).`)
	is.Equal(msg(`{"nested":[{"tags":1},{"label":1}]}`), `Field "nested[0].tags" must be an array.`)
	is.Equal(msg(`{"zzz":1,"nested":[{"label":"a","label":"b"}]}`), `Field "nested[0].label" is given twice in one object.`)
	is.Equal(msg(`{"zzz":1,"name":"a","name":"b","x":[}`), `The request body is not valid JSON (at byte 37).`)
	is.Equal(msg(`{"name":"a"} {"name":"b"}`), `The request body has data after the JSON object.`)
	is.Equal(msg(`{"name":"a","data":[]}`), `Field "data" must be an object.`)
}

// The strict decoder reads a body into its value in one pass: a batch of
// points allocates little beyond the values it keeps.
func TestStrictDecoderAllocations(t *testing.T) {
	body := batchBody(100)
	var v fleetwire.LocationBatch
	allocs := testing.AllocsPerRun(20, func() {
		v = fleetwire.LocationBatch{}
		if err := decodeValue(body, false, reflect.ValueOf(&v).Elem()); err != nil {
			t.Fatal(err)
		}
	})
	if len(v.Locations) != 100 {
		t.Fatalf("%d points", len(v.Locations))
	}
	// Per point: its vehicle id and the pointers of its seven members.
	if allocs > 100*9 {
		t.Fatalf("%.0f allocations for 100 points", allocs)
	}
}
