// Package sim drives a simulated fleet through the fleet service: vehicles
// that loop around their depots, halt now and then (under the stop
// threshold: their trip goes on), stand for deliveries (over it: their trip
// ends), and report their positions as a gateway would. The demo server and the load tools use it.
package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Fleet is a set of simulated vehicles of one account.
type Fleet struct {
	svc      *fleet.Service
	p        fleet.Principal
	vehicles []*car
	rng      *rand.Rand
}

type car struct {
	id           string
	lat0, lon0   float64 // the loop's centre
	radiusKm     float64
	angle        float64 // radians along the loop
	speed        float64 // km/h when driving
	stoppedTicks int
	odometer     float64
	// Deliveries: after driving deliverAfter (then every deliverEvery),
	// the vehicle stands for deliverFor, long enough to end its trip.
	driven                                 time.Duration
	deliverAfter, deliverEvery, deliverFor time.Duration
	delivering                             time.Duration
}

// deliveries plans the i-th vehicle's delivery stops: the first after 90 s
// to 3 minutes of driving, so that the demo completes trips within a few
// minutes, then every 12 to 24 minutes, each 5.5 to 7.75 minutes long.
func (c *car) deliveries(i int) *car {
	c.deliverAfter = 90*time.Second + time.Duration(i%8)*15*time.Second
	c.deliverEvery = 12*time.Minute + time.Duration(i%7)*2*time.Minute
	c.deliverFor = 330*time.Second + time.Duration(i%4)*45*time.Second
	return c
}

var cities = []struct {
	name     string
	lat, lon float64
}{{"Berlin", 52.52, 13.405}, {"Hamburg", 53.551, 9.993}, {"Munich", 48.137, 11.575}, {"Cologne", 50.937, 6.96}, {"Leipzig", 51.34, 12.375}}

// ExternalIDPrefix begins the external id of every vehicle New makes
// ("sim-01"): what tells the simulator's own vehicles from those a person
// adds to the same account, which Resume never drives.
const ExternalIDPrefix = "sim-"

// New creates n vehicles in the principal's account, each with an external
// id of ExternalIDPrefix and its number.
func New(ctx context.Context, svc *fleet.Service, p fleet.Principal, n int, seed uint64) (*Fleet, error) {
	f := &Fleet{svc: svc, p: p, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	makes := []struct{ make, model string }{{"Mercedes-Benz", "Sprinter"}, {"Ford", "Transit"}, {"Volvo", "FH16"}, {"Scania", "R450"}, {"Renault", "Master"}}
	for i := range n {
		city := cities[i%len(cities)]
		mk := makes[f.rng.IntN(len(makes))]
		year := 2018 + f.rng.IntN(8)
		odo := float64(10_000 + f.rng.IntN(150_000))
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{
			Name: fmt.Sprintf("%s %02d", mk.model, i+1), Make: mk.make, Model: mk.model, Year: &year,
			LicensePlate: fmt.Sprintf("%s-%c%c %d", city.name[:1], 'A'+rune(f.rng.IntN(26)), 'A'+rune(f.rng.IntN(26)), 100+f.rng.IntN(9000)),
			Tags:         []string{city.name}, OdometerKm: &odo, ExternalID: fmt.Sprintf("%s%02d", ExternalIDPrefix, i+1),
		})
		if err != nil {
			return nil, err
		}
		f.vehicles = append(f.vehicles, (&car{
			id: v.ID, lat0: city.lat + (f.rng.Float64()-0.5)*0.1, lon0: city.lon + (f.rng.Float64()-0.5)*0.15,
			radiusKm: 2 + f.rng.Float64()*6, angle: f.rng.Float64() * 2 * math.Pi, speed: 25 + f.rng.Float64()*45, odometer: odo,
		}).deliveries(i))
	}
	return f, nil
}

// Resume drives the simulator's own vehicles of the principal's account
// (those New made, by their external id) again, as a fleet of its own (a
// demo run again on the same store): each loops around the city of its
// first tag, or where it last reported, from its odometer on. Vehicles a
// person added are never driven, nor is one of the simulator's that has a
// device registered now (a real tracker reports for it). An account
// without the simulator's vehicles gets n new ones, as New.
func Resume(ctx context.Context, svc *fleet.Service, p fleet.Principal, n int, seed uint64) (*Fleet, error) {
	all, err := walk(func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, q)
	})
	if err != nil {
		return nil, err
	}
	devices, err := walk(func(q fleet.ListQuery) (fleet.List[fleet.Device], error) {
		return svc.ListDevices(ctx, p, fleet.DeviceFilter{}, q)
	})
	if err != nil {
		return nil, err
	}
	tracked := map[string]bool{}
	for _, d := range devices {
		tracked[d.VehicleID] = true
	}
	var vs []fleet.Vehicle
	own := 0
	for _, v := range all {
		if strings.HasPrefix(v.ExternalID, ExternalIDPrefix) {
			own++
			if !tracked[v.ID] {
				vs = append(vs, v)
			}
		}
	}
	if own == 0 {
		return New(ctx, svc, p, n, seed)
	}
	f := &Fleet{svc: svc, p: p, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for i, v := range vs {
		city := cities[i%len(cities)]
		for _, c := range cities {
			if len(v.Tags) > 0 && v.Tags[0] == c.name {
				city = c
			}
		}
		lat0, lon0 := city.lat+(f.rng.Float64()-0.5)*0.1, city.lon+(f.rng.Float64()-0.5)*0.15
		if v.LastLocation != nil && len(v.Tags) == 0 {
			lat0, lon0 = v.LastLocation.Latitude, v.LastLocation.Longitude
		}
		odo := 0.0
		if v.OdometerKm != nil {
			odo = *v.OdometerKm
		}
		f.vehicles = append(f.vehicles, (&car{
			id: v.ID, lat0: lat0, lon0: lon0, radiusKm: 2 + f.rng.Float64()*6, angle: f.rng.Float64() * 2 * math.Pi,
			speed: 25 + f.rng.Float64()*45, odometer: odo,
		}).deliveries(i))
	}
	return f, nil
}

// walk reads every page of a list.
func walk[T any](list func(fleet.ListQuery) (fleet.List[T], error)) ([]T, error) {
	var out []T
	q := fleet.ListQuery{Limit: fleet.MaxPageLimit}
	for {
		l, err := list(q)
		if err != nil {
			return nil, err
		}
		out = append(out, l.Items...)
		if !l.HasMore {
			return out, nil
		}
		q.Cursor = l.NextCursor
	}
}

// VehicleIDs returns the ids of the simulated vehicles.
func (f *Fleet) VehicleIDs() []string {
	ids := make([]string, len(f.vehicles))
	for i, c := range f.vehicles {
		ids[i] = c.id
	}
	return ids
}

// Step moves every vehicle by dt and reports one point each at time now,
// in one bulk batch.
func (f *Fleet) Step(ctx context.Context, now time.Time, dt time.Duration) error {
	pts := make([]fleet.Point, 0, len(f.vehicles))
	for _, c := range f.vehicles {
		speed := c.speed * (0.85 + 0.3*f.rng.Float64())
		switch {
		case c.delivering > 0:
			c.delivering -= dt
			speed = 0
		case c.driven >= c.deliverAfter:
			c.driven, c.deliverAfter = 0, c.deliverEvery
			c.delivering = c.deliverFor - dt
			speed = 0
		case c.stoppedTicks > 0:
			c.stoppedTicks--
			speed = 0
		case f.rng.Float64() < 0.01: // a delivery stop of up to ~4 minutes
			c.stoppedTicks = 10 + f.rng.IntN(110)
			speed = 0
		}
		if speed > 0 {
			c.driven += dt
		}
		km := speed * dt.Hours()
		c.odometer += km
		c.angle += km / c.radiusKm
		lat := c.lat0 + (c.radiusKm/111.0)*math.Sin(c.angle)
		lon := c.lon0 + (c.radiusKm/(111.0*math.Cos(c.lat0*math.Pi/180)))*math.Cos(c.angle)
		heading := math.Mod(360-c.angle*180/math.Pi, 360) // tangent of the counter-clockwise loop
		if heading < 0 {
			heading += 360
		}
		s, h, o := math.Round(speed*10)/10, math.Round(heading*10)/10, math.Round(c.odometer*10)/10
		if h >= 360 {
			h = 0
		}
		pts = append(pts, fleet.Point{VehicleID: c.id, Latitude: lat, Longitude: lon, Timestamp: now, Speed: &s, Heading: &h, OdometerKm: &o})
	}
	if len(pts) == 0 {
		return nil // every vehicle of the simulator has a real tracker now
	}
	_, err := f.svc.IngestBulk(ctx, f.p, pts)
	return err
}

// Run steps the fleet every interval until ctx ends.
func (f *Fleet) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := f.Step(ctx, f.svc.Now(), every); err != nil && ctx.Err() == nil {
				// The demo keeps going; a failed step is retried next tick.
				continue
			}
		}
	}
}
