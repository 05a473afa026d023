package osmand

import (
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// A parameter that names the device, or any value, given twice in one
// OsmAnd request is a bad request (API.md §13): which one counts would be
// the parser's choice, and another device's (another account's) position
// could be stored under it.
func TestOsmAndValueGivenTwiceIsRefused(t *testing.T) {
	for name, r := range map[string]Request{
		"id twice":                 query("id=111&id=222&lat=1&lon=2"),
		"id twice, semicolon":      query("id=111;id=222&lat=1&lon=2"),
		"id twice, escaped":        query("id=111&%69d=222&lat=1&lon=2"),
		"id with deviceid":         query("id=111&deviceid=222&lat=1&lon=2"),
		"deviceid twice":           query("deviceid=111&lat=1&lon=2&deviceid=111"),
		"id twice, same value":     query("id=111&lat=1&lon=2&id=111"),
		"lat twice":                query("id=111&lat=1&lon=2&lat=3"),
		"lat with location":        query("id=111&lat=1&lon=2&location=3,4"),
		"location twice":           query("id=111&location=1,2&location=3,4"),
		"timestamp twice":          query("id=111&lat=1&lon=2&timestamp=1377177267&timestamp=1377177268"),
		"bearing with heading":     query("id=111&lat=1&lon=2&bearing=10&heading=20"),
		"an attribute twice":       query("id=111&lat=1&lon=2&rpm=1000&rpm=2000"),
		"valid twice":              query("id=111&lat=1&lon=2&valid=false&valid=true"),
		"form body, id twice":      {Method: "POST", ContentType: "application/x-www-form-urlencoded", Body: []byte("id=111&id=222&lat=1&lon=2")},
		"JSON device_id twice":     jsonRequest(`{"device_id":"111","device_id":"222","location":{"coords":{"latitude":1,"longitude":2}}}`),
		"JSON device_id by case":   jsonRequest(`{"device_id":"111","DEVICE_ID":"222","location":{"coords":{"latitude":1,"longitude":2}}}`),
		"JSON escaped name":        jsonRequest(`{"device_id":"111","device\u005fid":"222","location":{"coords":{"latitude":1,"longitude":2}}}`),
		"JSON location twice":      jsonRequest(`{"device_id":"111","location":{"coords":{"latitude":1,"longitude":2}},"location":{"coords":{"latitude":3,"longitude":4}}}`),
		"JSON latitude twice":      jsonRequest(`{"device_id":"111","location":{"coords":{"latitude":1,"longitude":2,"latitude":3}}}`),
		"JSON timestamp twice":     jsonRequest(`{"device_id":"111","location":{"timestamp":"2026-05-01T10:00:00Z","timestamp":"2026-05-01T11:00:00Z","coords":{"latitude":1,"longitude":2}}}`),
		"JSON extras member twice": jsonRequest(`{"device_id":"111","location":{"extras":{"a":1,"a":2},"coords":{"latitude":1,"longitude":2}}}`),
		"JSON nested member twice": jsonRequest(`{"device_id":"111","location":{"extras":{"x":[{"b":1,"b":2}]},"coords":{"latitude":1,"longitude":2}}}`),
		"JSON members past bound":  jsonRequest(`{"device_id":"111","location":{"coords":{"latitude":1,"longitude":2}},"x":{` + manyMembers(maxParams+1) + `}}`),
	} {
		t.Run(name, func(t *testing.T) {
			m, _, err := osmAndDecode(t, r)
			if err == nil {
				t.Fatalf("decoded %q with %d positions, want a bad request", m.Identifier, len(m.Positions))
			}
			if len(m.Positions) != 0 {
				t.Fatal("a refused request left a position")
			}
		})
	}
	// Names alike are not the same name; the same name in two objects is
	// no repeat.
	for _, r := range []Request{
		query("id=111&lat=1&lon=2&rpm=1&RPM=2&accuracy=3&hdop=4"),
		query("id=111&lat=1&lon=2&&;&"),
		jsonRequest(`{"device_id":"111","location":{"extras":{"a":{"a":1},"b":[{"a":1},{"a":2}]},"coords":{"latitude":1,"longitude":2,"speed":-1}}}`),
		jsonRequest(`{"device_id":"111","location":{"coords":{"latitude":1,"longitude":2}},"x":{` + manyMembers(maxParams) + `}}`),
	} {
		is := is.New(t)
		m, _, err := osmAndDecode(t, r)
		is.NoErr(err)
		is.Equal(m.Identifier, "111")
		is.Equal(len(m.Positions), 1)
	}
}

// manyMembers is n members of an object, "m0":0,"m1":1...
func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%d", fmt.Sprint("m", i), i)
	}
	return b.String()
}
