package fleethttp

import (
	"testing"

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
	`{"locations":null}`,
	`[]`,
	``,
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

// checkAgreement: whenever the fast path accepts a body, the strict decoder
// accepts it too, with the same points.
func checkAgreement(t *testing.T, body []byte) {
	t.Helper()
	fast, ok := decodeBatchFast(body)
	if !ok {
		return
	}
	req, err := decode[batchRequest](body, false)
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
			(p.OdometerKm != nil) == f.hasOd && (p.OdometerKm == nil || *p.OdometerKm == f.odo)
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
