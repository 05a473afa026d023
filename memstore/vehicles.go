package memstore

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

func cloneEvent(e fleet.Event) fleet.Event {
	e.Data = slices.Clone(e.Data)
	return e
}

// packedPoint is a stored location point: 72 bytes, and its attributes in
// their binary form (fleet.Attributes.AppendBinary; nil for none). Absent
// optional values are NaN.
type packedPoint struct {
	micros   int64 // timestamp, Unix microseconds
	lat, lon float64
	odometer float64
	speed    float32
	heading  float32
	attrs    []byte
}

func pack(p fleet.Point) packedPoint {
	nan32, nan64 := float32(math.NaN()), math.NaN()
	pp := packedPoint{micros: p.Timestamp.UnixMicro(), lat: p.Latitude, lon: p.Longitude, speed: nan32, heading: nan32, odometer: nan64}
	if p.Speed != nil {
		pp.speed = float32(*p.Speed)
	}
	if p.Heading != nil {
		pp.heading = float32(*p.Heading)
	}
	if p.OdometerKm != nil {
		pp.odometer = *p.OdometerKm
	}
	pp.attrs, _ = p.Attributes.AppendBinary(nil) // a copy: the store shares no memory with its caller
	return pp
}

func (pp packedPoint) unpack(vehicleID string) fleet.Point {
	p := fleet.Point{VehicleID: vehicleID, Latitude: pp.lat, Longitude: pp.lon, Timestamp: time.UnixMicro(pp.micros).UTC()}
	if !math.IsNaN(float64(pp.speed)) {
		s := roundF32(pp.speed)
		p.Speed = &s
	}
	if !math.IsNaN(float64(pp.heading)) {
		h := roundF32(pp.heading)
		p.Heading = &h
	}
	if !math.IsNaN(pp.odometer) {
		o := pp.odometer
		p.OdometerKm = &o
	}
	_ = p.Attributes.UnmarshalBinary(pp.attrs) // pack wrote them: they read back
	return p
}

// roundF32 widens a float32 kept to 0.01 precision without float32 noise
// (87.3 stays 87.3, not 87.30000305).
func roundF32(f float32) float64 { return math.Round(float64(f)*100) / 100 }

// series is one vehicle's points in ascending time.
type series struct{ pts []packedPoint }

func (s *series) search(micros int64) (int, bool) {
	i := sort.Search(len(s.pts), func(i int) bool { return s.pts[i].micros >= micros })
	return i, i < len(s.pts) && s.pts[i].micros == micros
}

func (t *tx) CreateVehicle(v fleet.Vehicle) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := t.claimExternalID(v.AccountID, v.ExternalID, v.ID); err != nil {
		return err
	}
	v.DriverID = "" // SetVehicleDriver's alone
	return t.s.vehicles.insert(t.txn, v)
}

func (t *tx) claimExternalID(accountID, ext, id string) error {
	if ext == "" {
		return nil
	}
	k := accountID + "\x00" + ext
	if owner, ok := t.s.externalIDs[k]; ok {
		if owner == id {
			return nil
		}
		return fleet.Errorf(fleet.CodeConflict, "external_id %q is taken.", ext)
	}
	t.s.externalIDs[k] = id
	t.undo(func() { delete(t.s.externalIDs, k) })
	return nil
}

func (t *tx) releaseExternalID(accountID, ext string) {
	if ext == "" {
		return
	}
	k := accountID + "\x00" + ext
	owner, ok := t.s.externalIDs[k]
	if !ok {
		return
	}
	delete(t.s.externalIDs, k)
	t.undo(func() { t.s.externalIDs[k] = owner })
}

func (t *tx) Vehicle(accountID, id string) (fleet.Vehicle, error) {
	return t.s.vehicles.get(accountID, id)
}

func (t *tx) Vehicles(accountID string, f fleet.VehicleFilter, p fleet.Page) ([]fleet.Vehicle, error) {
	return t.s.vehicles.list(accountID, p, func(v fleet.Vehicle) bool { return f.Match(&v) }), nil
}

func (t *tx) UpdateVehicle(v fleet.Vehicle) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.vehicles.get(v.AccountID, v.ID)
	if err != nil {
		return err
	}
	if old.ExternalID != v.ExternalID {
		if err := t.claimExternalID(v.AccountID, v.ExternalID, v.ID); err != nil {
			return err
		}
		t.releaseExternalID(v.AccountID, old.ExternalID)
	}
	v.CreatedAt, v.DriverID = old.CreatedAt, old.DriverID // DriverID is SetVehicleDriver's alone
	return t.s.vehicles.put(t.txn, v)
}

func (t *tx) DeleteVehicle(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.vehicles.get(accountID, id)
	if err != nil {
		return err
	}
	if err := t.s.vehicles.delete(t.txn, accountID, id); err != nil {
		return err
	}
	t.releaseExternalID(accountID, old.ExternalID)
	t.setDriving(old.DriverID, "") // its driver drives nothing now
	if err := t.deleteSchedulesOf(accountID, id); err != nil {
		return err
	}
	if ser, ok := t.s.points[id]; ok {
		delete(t.s.points, id)
		t.undo(func() { t.s.points[id] = ser })
	}
	t.deleteTripsOf(id)
	return nil
}

func (t *tx) VehiclesToSweep(stationaryBefore, reportedBefore time.Time, limit int) ([]fleet.Vehicle, error) {
	var out []fleet.Vehicle
	for _, v := range t.s.vehicles.byID {
		if v.Status == fleet.StatusOffline || v.LastLocation == nil {
			continue
		}
		stale := !v.LastLocation.Timestamp.After(reportedBefore)
		resting := v.Status == fleet.StatusIdle && v.StationarySince != nil && !v.StationarySince.After(stationaryBefore)
		if stale || resting {
			out = append(out, v.Clone())
		}
	}
	slices.SortFunc(out, func(a, b fleet.Vehicle) int { return a.LastLocation.Timestamp.Compare(b.LastLocation.Timestamp) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (t *tx) VehiclesGoneSilent(since, now time.Time, minutes []int, after string, limit int) ([]fleet.Vehicle, error) {
	var out []fleet.Vehicle
	for _, v := range t.s.vehicles.byID {
		if v.LastLocation == nil || v.ID <= after {
			continue
		}
		last := v.LastLocation.Timestamp
		for _, m := range minutes {
			d := time.Duration(m) * time.Minute
			if !last.After(now.Add(-d)) && last.After(since.Add(-d)) {
				out = append(out, v.Clone())
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b fleet.Vehicle) int { return strings.Compare(a.ID, b.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (t *tx) InsertPoints(vehicleID string, points []fleet.Point) ([]fleet.Point, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	if _, ok := t.s.vehicles.byID[vehicleID]; !ok {
		return nil, fleet.NotFound("vehicle", vehicleID)
	}
	ser := t.s.points[vehicleID]
	if ser == nil {
		ser = &series{}
		t.s.points[vehicleID] = ser
		t.undo(func() { delete(t.s.points, vehicleID) })
	}
	stored := make([]fleet.Point, 0, len(points))
	var added []int64
	for _, p := range points {
		pp := pack(p)
		if n := len(ser.pts); n == 0 || ser.pts[n-1].micros < pp.micros {
			ser.pts = append(ser.pts, pp) // the usual case: newer than all
		} else {
			i, dup := ser.search(pp.micros)
			if dup {
				continue
			}
			ser.pts = slices.Insert(ser.pts, i, pp)
		}
		added = append(added, pp.micros)
		stored = append(stored, p)
	}
	if len(added) > 0 {
		t.undo(func() {
			for _, m := range added {
				if i, ok := ser.search(m); ok {
					ser.pts = slices.Delete(ser.pts, i, i+1)
				}
			}
		})
	}
	return stored, nil
}

func (t *tx) Points(vehicleID string, from, to time.Time, limit int) ([]fleet.Point, error) {
	ser := t.s.points[vehicleID]
	out := []fleet.Point{}
	if ser == nil {
		return out, nil
	}
	i, _ := ser.search(from.UnixMicro())
	end := to.UnixMicro()
	for ; i < len(ser.pts) && ser.pts[i].micros <= end && len(out) < limit; i++ {
		out = append(out, ser.pts[i].unpack(vehicleID))
	}
	return out, nil
}

func (t *tx) AppendEvent(e fleet.Event) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.events.insert(t.txn, e)
}

func (t *tx) Event(accountID, id string) (fleet.Event, error) { return t.s.events.get(accountID, id) }

func (t *tx) Events(accountID string, f fleet.EventFilter, p fleet.Page) ([]fleet.Event, error) {
	return t.s.events.list(accountID, p, func(e fleet.Event) bool { return f.Match(&e) }), nil
}

// PurgeEvents implements fleet.Store.
func (s *Store) PurgeEvents(ctx context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var old []fleet.Event
	for _, e := range s.events.byID {
		if e.CreatedAt.Before(before) {
			old = append(old, e)
		}
	}
	for _, e := range old {
		s.events.remove(e.AccountID, e.ID)
	}
	return len(old), nil
}

// PurgePoints implements fleet.Store.
func (s *Store) PurgePoints(ctx context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cut := before.UnixMicro()
	n := 0
	for _, ser := range s.points {
		i, _ := ser.search(cut)
		if i > 0 {
			ser.pts = slices.Delete(ser.pts, 0, i)
			n += i
		}
	}
	return n, nil
}

// ApplyIngest implements fleet.Tx: the write-set replayed.
func (t *tx) ApplyIngest(w fleet.IngestWrites) error {
	return fleet.ReplayIngest(t, w)
}
