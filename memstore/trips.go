package memstore

import (
	"slices"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// tripTables hold the trips by id, and each vehicle's trip ids in start
// order.
type tripTables struct {
	byID      map[string]fleet.Trip
	byVehicle map[string][]string
}

func newTripTables() tripTables {
	return tripTables{byID: map[string]fleet.Trip{}, byVehicle: map[string][]string{}}
}

// setOrder replaces a vehicle's trip ids, undoably.
func (t *tx) setOrder(vehicleID string, ids []string) {
	old, had := t.s.tr.byVehicle[vehicleID]
	if len(ids) == 0 {
		delete(t.s.tr.byVehicle, vehicleID)
	} else {
		t.s.tr.byVehicle[vehicleID] = ids
	}
	t.undo(func() {
		if had {
			t.s.tr.byVehicle[vehicleID] = old
		} else {
			delete(t.s.tr.byVehicle, vehicleID)
		}
	})
}

// setTrip replaces a trip (nil deletes it), undoably.
func (t *tx) setTrip(id string, tr *fleet.Trip) {
	old, had := t.s.tr.byID[id]
	if tr == nil {
		delete(t.s.tr.byID, id)
	} else {
		t.s.tr.byID[id] = *tr
	}
	t.undo(func() {
		if had {
			t.s.tr.byID[id] = old
		} else {
			delete(t.s.tr.byID, id)
		}
	})
}

func (t *tx) PutTrips(ts []fleet.Trip) error {
	if err := t.writable(); err != nil {
		return err
	}
	for _, tr := range ts {
		if _, ok := t.s.vehicles.owner[tr.VehicleID]; !ok {
			return fleet.NotFound("vehicle", tr.VehicleID)
		}
	}
	for _, tr := range ts {
		t.putTrip(tr)
	}
	return nil
}

func (t *tx) putTrip(tr fleet.Trip) {
	old, had := t.s.tr.byID[tr.ID]
	tr = tr.Clone()
	t.setTrip(tr.ID, &tr)
	if had && old.Start.Timestamp.Equal(tr.Start.Timestamp) {
		return // in its place already
	}
	ids := slices.DeleteFunc(slices.Clone(t.s.tr.byVehicle[tr.VehicleID]), func(id string) bool { return id == tr.ID })
	i, _ := slices.BinarySearchFunc(ids, tr.Start.Timestamp, func(id string, at time.Time) int {
		return t.s.tr.byID[id].Start.Timestamp.Compare(at)
	})
	t.setOrder(tr.VehicleID, slices.Insert(ids, i, tr.ID))
}

func (t *tx) DeleteTrip(vehicleID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if tr, ok := t.s.tr.byID[id]; !ok || tr.VehicleID != vehicleID {
		return nil
	}
	t.setTrip(id, nil)
	t.setOrder(vehicleID, slices.DeleteFunc(slices.Clone(t.s.tr.byVehicle[vehicleID]), func(o string) bool { return o == id }))
	return nil
}

// deleteTripsOf deletes a vehicle's trips (the vehicle is being deleted).
func (t *tx) deleteTripsOf(vehicleID string) {
	for _, id := range t.s.tr.byVehicle[vehicleID] {
		t.setTrip(id, nil)
	}
	t.setOrder(vehicleID, nil)
}

func (t *tx) Trip(accountID, id string) (fleet.Trip, error) {
	if tr, ok := t.s.tr.byID[id]; ok && tr.AccountID == accountID {
		return tr.Clone(), nil
	}
	return fleet.Trip{}, fleet.NotFound("trip", id)
}

func (t *tx) LatestTrips(vehicleIDs []string) (map[string]fleet.Trip, error) {
	out := make(map[string]fleet.Trip, len(vehicleIDs))
	for _, v := range vehicleIDs {
		if ids := t.s.tr.byVehicle[v]; len(ids) > 0 {
			out[v] = t.s.tr.byID[ids[len(ids)-1]].Clone()
		}
	}
	return out, nil
}

func (t *tx) LastTripBefore(vehicleID string, before time.Time) (fleet.Trip, bool, error) {
	ids := t.s.tr.byVehicle[vehicleID]
	for i := len(ids) - 1; i >= 0; i-- {
		if tr := t.s.tr.byID[ids[i]]; tr.Start.Timestamp.Before(before) {
			return tr.Clone(), true, nil
		}
	}
	return fleet.Trip{}, false, nil
}

func meets(tr *fleet.Trip, from, to time.Time) bool {
	return !tr.Start.Timestamp.After(to) && !tr.End.Timestamp.Before(from)
}

func (t *tx) VehicleTrips(vehicleID string, from, to, after time.Time, limit int) ([]fleet.Trip, error) {
	out := []fleet.Trip{}
	for _, id := range t.s.tr.byVehicle[vehicleID] {
		if len(out) >= limit {
			break
		}
		if tr := t.s.tr.byID[id]; tr.Start.Timestamp.After(after) && meets(&tr, from, to) {
			out = append(out, tr.Clone())
		}
	}
	return out, nil
}

func (t *tx) AccountTrips(accountID, vehicleID string, from, to time.Time) ([]fleet.Trip, error) {
	out := []fleet.Trip{}
	for _, vid := range t.s.vehicles.order[accountID] {
		if vehicleID != "" && vid != vehicleID {
			continue
		}
		for _, id := range t.s.tr.byVehicle[vid] {
			if tr := t.s.tr.byID[id]; meets(&tr, from, to) {
				out = append(out, tr.Clone())
			}
		}
	}
	return out, nil
}
