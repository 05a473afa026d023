package sqlstore

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// randomLiveItems are live reports with every field set or not, texts
// that encoding/json writes as they are and some it escapes, numbers of
// every form it writes.
func randomLiveItems(rng *rand.Rand, n int) []fleet.StreamItem {
	texts := []string{"veh_06h25k5ae5x259563agwzsneem", "Truck 7", `say "hi"`, "a<b>&c", "Müller", "\u2028", "tab\t", ""}
	nums := []float64{0, math.Copysign(0, -1), 52.520008, -13.404954, 1e-7, 1e21, 123456.789, 0.1 + 0.2, 42, math.MaxFloat64, 5e-324}
	num := func() float64 { return nums[rng.IntN(len(nums))] * float64(1-2*rng.IntN(2)) }
	opt := func() *float64 {
		if rng.IntN(3) == 0 {
			return nil
		}
		f := num()
		return &f
	}
	out := make([]fleet.StreamItem, n)
	for i := range out {
		r := fleet.LocationRecord{
			VehicleID: texts[rng.IntN(2)], Name: texts[rng.IntN(len(texts))],
			Location: fleet.RecordPoint{Latitude: num(), Longitude: num(),
				Timestamp: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(1e15)))},
			Status: fleet.VehicleStatus([]string{"moving", "idle", "stopped", "offline"}[rng.IntN(4)]), Speed: opt(), Heading: opt(),
		}
		if rng.IntN(2) == 0 {
			r.Attributes = fleet.Attributes{fleet.BoolAttr("ignition", rng.IntN(2) == 0), fleet.NumberAttr("power_v", num()),
				fleet.TextAttr("driver_identifier", texts[rng.IntN(len(texts))])}.Sort()
		}
		out[i] = fleet.StreamItem{VehicleID: r.VehicleID, Record: r}
	}
	return out
}

// TestLiveItemsAsEncodingJSONWritesThem: the feed's rows hold reports
// byte for byte as encoding/json writes them (rows of other versions read
// the same) and read back as encoding/json reads them, whether the fast
// reading takes them or encoding/json does.
func TestLiveItemsAsEncodingJSONWritesThem(t *testing.T) {
	is := is.New(t)
	rng := rand.New(rand.NewPCG(14, 37))
	fast := 0
	for n := range 400 {
		items := randomLiveItems(rng, n%5)
		li := make([]liveItem, len(items))
		for i, it := range items {
			li[i] = liveItem{VehicleID: it.VehicleID, Record: it.Record}
		}
		want, err := json.Marshal(li)
		is.NoErr(err)
		got := appendLiveItems(nil, items)
		is.Equal(string(got), string(want))

		back, err := parseLiveItems(string(got))
		is.NoErr(err)
		var ref []liveItem
		is.NoErr(json.Unmarshal(got, &ref))
		is.True(reflect.DeepEqual(back, ref)) // read as encoding/json reads it
		if !strings.ContainsFunc(string(got), func(r rune) bool { return r == '\\' || r >= 0x80 }) {
			fastBack, ok := parseLiveItemsFast(string(got))
			is.True(ok) // ASCII without escapes: the fast reading takes it
			is.True(reflect.DeepEqual(fastBack, ref))
			fast++
		}
	}
	is.True(fast > 50)
	_, err := parseLiveItems(`[{"v":"x","r":{"speed":`)
	is.True(err != nil) // cut: an error
}

// FuzzParseLiveItems: any text reads as encoding/json reads it, or is an
// error for both; never a panic.
func FuzzParseLiveItems(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 6 {
		f.Add(string(appendLiveItems(nil, randomLiveItems(rng, n))))
	}
	f.Add(`[{"v":"a","r":{"attributes":null,"speed":1e400}}]`)
	f.Fuzz(func(t *testing.T, s string) {
		back, err := parseLiveItems(s)
		var ref []liveItem
		rerr := json.Unmarshal([]byte(s), &ref)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("%q: %v, encoding/json: %v", s, err, rerr)
		}
		if err == nil && !reflect.DeepEqual(back, ref) {
			t.Fatalf("%q: %+v, encoding/json: %+v", s, back, ref)
		}
	})
}

// BenchmarkLiveItems writes and reads a batch's 1,000 live reports (each
// with three attributes or none) as the feed's rows hold them, against
// encoding/json doing the same in the same run: ratio = this code's time
// over encoding/json's.
func BenchmarkLiveItems(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	items := randomLiveItems(rng, 1000)
	for i := range items { // ASCII names and a tracker's numbers, as most are
		r := &items[i].Record
		r.Name = "Truck 7"
		r.Location.Latitude, r.Location.Longitude = 52.5+float64(i)/1e4, 13.404954
		speed, heading := float64(i%90), 180.5
		r.Speed, r.Heading = &speed, &heading
		if r.Attributes != nil {
			r.Attributes = fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.NumberAttr("power_v", 12.6),
				fleet.TextAttr("driver_identifier", "01A2B3C4D5E6F708")}.Sort()
		}
	}
	li := make([]liveItem, len(items))
	for i, it := range items {
		li[i] = liveItem{VehicleID: it.VehicleID, Record: it.Record}
	}
	var ours, theirs time.Duration
	for b.Loop() {
		start := time.Now()
		s := string(appendLiveItems(nil, items))
		if _, err := parseLiveItems(s); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		j, _ := json.Marshal(li)
		var back []liveItem
		if err := json.Unmarshal(j, &back); err != nil {
			b.Fatal(err)
		}
		ours, theirs = ours+mid.Sub(start), theirs+time.Since(mid)
	}
	b.ReportMetric(float64(ours.Microseconds())/float64(b.N), "µs/batch")
	b.ReportMetric(float64(theirs.Microseconds())/float64(b.N), "encoding-json-µs/batch")
	b.ReportMetric(ours.Seconds()/theirs.Seconds(), "ratio")
}
