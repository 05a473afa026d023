package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
)

// emit appends an event of the account to the transaction, so a change and
// its events commit together.
func (s *Service) emit(tx emitTx, accountID, typ string, now time.Time, data any) error {
	e, err := newEvent(accountID, typ, now, data)
	if err != nil {
		return err
	}
	if err := tx.AppendEvent(e); err != nil {
		return err
	}
	if err := s.enqueueDeliveries(tx, e, nil); err != nil {
		return err
	}
	return s.queueNotifications(tx, e, data)
}

// Optional is a field of a patch: Set reports whether the client named it;
// Value is its new value (the zero value clears a nullable field).
//
// In JSON (RFC 7396, merge patch) an absent member leaves Set false, null
// sets it with the zero value, and any other value sets it to that value.
// Patch types tag their fields `omitzero`, so that an Optional that is not
// Set is left out when a patch is written.
type Optional[T any] struct {
	Set   bool
	Value T
}

// Some returns an Optional set to v.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// IsZero reports whether o is not Set (for `omitzero`).
func (o Optional[T]) IsZero() bool { return !o.Set }

// MarshalJSON writes the value; a Set zero value (a clearing) is null.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if reflect.ValueOf(&o.Value).Elem().IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

// UnmarshalJSON marks o Set and reads its value (null: the zero value).
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	var zero T
	o.Value = zero
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// VehiclePatch is a JSON merge patch of a vehicle: fields not Set stay.
type VehiclePatch struct {
	Name         Optional[string]   `json:"name,omitzero"`
	VIN          Optional[string]   `json:"vin,omitzero"`
	Make         Optional[string]   `json:"make,omitzero"`
	Model        Optional[string]   `json:"model,omitzero"`
	Year         Optional[*int]     `json:"year,omitzero"`
	LicensePlate Optional[string]   `json:"license_plate,omitzero"`
	ExternalID   Optional[string]   `json:"external_id,omitzero"`
	Tags         Optional[[]string] `json:"tags,omitzero"`
	OdometerKm   Optional[*float64] `json:"odometer_km,omitzero"`
}

func set[T any](dst *T, o Optional[T]) {
	if o.Set {
		*dst = o.Value
	}
}

func normaliseVehicle(v *Vehicle) {
	v.Name = strings.TrimSpace(v.Name)
	v.VIN = strings.ToUpper(strings.TrimSpace(v.VIN))
	v.OdometerKm = unsignedZeroPtr(v.OdometerKm)
	if v.Tags == nil {
		v.Tags = []string{}
	}
	v.Tags = slices.Compact(slices.Clone(v.Tags))
}

func notFoundVehicle(id string) error { return NotFound("vehicle", id) }

func (s *Service) getVehicle(tx VehicleTx, p Principal, id string) (Vehicle, error) {
	if !ValidID(PrefixVehicle, id) {
		return Vehicle{}, notFoundVehicle(id)
	}
	v, err := tx.Vehicle(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Vehicle{}, notFoundVehicle(id)
	}
	return v, err
}

func conflictExternalID(err error, externalID string) error {
	if ErrorCode(err) == CodeConflict {
		return Errorf(CodeConflict, "A vehicle with external_id %q exists in this account.", externalID)
	}
	return err
}

// CreateVehicle creates a vehicle from the fields a client sets in in (the
// others are ignored). A new vehicle is offline until it reports.
func (s *Service) CreateVehicle(ctx context.Context, p Principal, in Vehicle) (Vehicle, error) {
	if err := p.allow("CreateVehicle"); err != nil {
		return Vehicle{}, err
	}
	now := s.Now()
	v := Vehicle{
		ID: NewID(PrefixVehicle), AccountID: p.Account.ID, Name: in.Name, VIN: in.VIN, Make: in.Make,
		Model: in.Model, Year: in.Year, LicensePlate: in.LicensePlate, ExternalID: ExternalIDForm(in.ExternalID), Tags: in.Tags,
		OdometerKm: in.OdometerKm, Status: StatusOffline, CreatedAt: now, UpdatedAt: now,
	}
	normaliseVehicle(&v)
	if err := v.Validate(now); err != nil {
		return Vehicle{}, err
	}
	err := s.update(ctx, func(tx Tx) error {
		if err := tx.CreateVehicle(v); err != nil {
			return conflictExternalID(err, v.ExternalID)
		}
		return s.emit(tx, v.AccountID, EventVehicleCreated, now, v)
	})
	if err != nil {
		return Vehicle{}, err
	}
	return v, nil
}

// Vehicle returns one of the account's vehicles.
func (s *Service) Vehicle(ctx context.Context, p Principal, id string) (Vehicle, error) {
	if err := p.allow("Vehicle"); err != nil {
		return Vehicle{}, err
	}
	var v Vehicle
	err := s.view(ctx, func(tx Tx) (err error) { v, err = s.getVehicle(tx, p, id); return err })
	return v, err
}

// ListVehicles lists the account's vehicles in creation order.
func (s *Service) ListVehicles(ctx context.Context, p Principal, f VehicleFilter, q ListQuery) (List[Vehicle], error) {
	if err := p.allow("ListVehicles"); err != nil {
		return List[Vehicle]{}, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return List[Vehicle]{}, Errorf(CodeInvalidRequest, "status must be one of moving, idle, stopped, offline.")
	}
	return listVehicles(ctx, s, p, f, q)
}

func listVehicles(ctx context.Context, s *Service, p Principal, f VehicleFilter, q ListQuery) (List[Vehicle], error) {
	if err := f.checkText(); err != nil {
		return List[Vehicle]{}, err
	}
	page, limit, err := q.page(PrefixVehicle, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Vehicle]{}, err
	}
	var vs []Vehicle
	err = s.view(ctx, func(tx Tx) (err error) { vs, err = tx.Vehicles(p.Account.ID, f, page); return err })
	if err != nil {
		return List[Vehicle]{}, err
	}
	return finish(vs, limit, func(v Vehicle) string { return v.ID }), nil
}

// UpdateVehicle applies a merge patch to a vehicle; the result is validated
// whole, and nothing changes if it is invalid.
func (s *Service) UpdateVehicle(ctx context.Context, p Principal, id string, patch VehiclePatch) (Vehicle, error) {
	if err := p.allow("UpdateVehicle"); err != nil {
		return Vehicle{}, err
	}
	now := s.Now()
	var v Vehicle
	err := s.update(ctx, func(tx Tx) (err error) {
		v, err = s.getVehicle(tx, p, id)
		if err != nil {
			return err
		}
		odometer := v.OdometerKm
		set(&v.Name, patch.Name)
		set(&v.VIN, patch.VIN)
		set(&v.Make, patch.Make)
		set(&v.Model, patch.Model)
		set(&v.Year, patch.Year)
		set(&v.LicensePlate, patch.LicensePlate)
		if patch.ExternalID.Set {
			// Only a new external_id is put in NFC: one stored before the
			// rule stays as it is until it is changed.
			v.ExternalID = ExternalIDForm(patch.ExternalID.Value)
		}
		set(&v.Tags, patch.Tags)
		set(&v.OdometerKm, patch.OdometerKm)
		normaliseVehicle(&v)
		if err := v.Validate(now); err != nil {
			return err
		}
		v.UpdatedAt = now
		if err := tx.UpdateVehicle(v); err != nil {
			return conflictExternalID(err, v.ExternalID)
		}
		if err := s.emit(tx, v.AccountID, EventVehicleUpdated, now, v); err != nil {
			return err
		}
		if !samePtr(odometer, v.OdometerKm) { // a corrected odometer moves what is due
			return s.reviewVehicleSchedules(tx, &v, now)
		}
		return nil
	})
	if err != nil {
		return Vehicle{}, err
	}
	return v, nil
}

// VehicleDeleted is the answer to, and the event data of, a deletion.
type VehicleDeleted struct {
	VehicleID string `json:"vehicle_id"`
	Deleted   bool   `json:"deleted"`
}

// DeleteVehicle deletes a vehicle with its location history and its
// schedules; work orders and alerts stay as history. In the same
// transaction the vehicle leaves every alert rule that lists it, and a rule
// that listed only it is disabled (see dropVehicleFromRules), and its
// devices are detached (vehicle_id null), and its share links are deleted
// (their open streams end).
func (s *Service) DeleteVehicle(ctx context.Context, p Principal, id string) (VehicleDeleted, error) {
	if err := p.allow("DeleteVehicle"); err != nil {
		return VehicleDeleted{}, err
	}
	now := s.Now()
	out := VehicleDeleted{VehicleID: id, Deleted: true}
	// It may change the account's rules.
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) error {
		v, err := s.getVehicle(tx, p, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteVehicle(v.AccountID, v.ID); err != nil {
			return err
		}
		if err := s.dropVehicleFromRules(tx, v.AccountID, v.ID, now); err != nil {
			return err
		}
		if err := s.detachDevices(tx, v.AccountID, v.ID, now); err != nil {
			return err
		}
		if _, err := tx.DeleteShareLinks(v.AccountID, v.ID); err != nil {
			return err
		}
		return s.emit(tx, v.AccountID, EventVehicleDeleted, now, out)
	})
	if err != nil {
		return VehicleDeleted{}, err
	}
	s.devices.forgetVehicle(id)
	s.shares.endVehicle(p.Account.ID, id, ErrShareLinkEnded)
	return out, nil
}

// Sweep finds vehicles whose status the clock has changed with no new
// report (idle to stopped, anything to offline), records the change and its
// event, then opens the vehicle_offline alerts the clock owes
// (CheckOfflineAlerts). It returns how many vehicles changed.
func (j Jobs) Sweep(ctx context.Context) (int, error) {
	s := j.s
	n, err := s.sweepStatuses(ctx)
	if err != nil {
		return n, err
	}
	_, err = s.Jobs().CheckOfflineAlerts(ctx)
	return n, err
}

func (s *Service) sweepStatuses(ctx context.Context) (int, error) {
	const batch = 500
	th := s.opts.Thresholds.orDefault()
	total := 0
	for {
		now := s.Now()
		n := 0
		var changed []Vehicle
		err := s.update(ctx, func(tx Tx) error {
			changed = changed[:0]
			vs, err := tx.VehiclesToSweep(now.Add(-th.StopAfter), now.Add(-th.OfflineAfter), batch)
			if err != nil {
				return err
			}
			n = len(vs)
			for _, v := range vs {
				to := VehicleStatusAt(v, now, th)
				if to == v.Status {
					continue
				}
				from := v.Status
				v.Status = to
				if err := tx.UpdateVehicle(v); err != nil {
					return err
				}
				if err := s.emit(tx, v.AccountID, EventVehicleStatusChanged, now, StatusChange{v.ID, from, to, now}); err != nil {
					return err
				}
				if to == StatusStopped || to == StatusOffline {
					if err := s.closeTrip(tx, v.ID, now, th); err != nil {
						return err
					}
				}
				changed = append(changed, v)
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(changed)
		// A full batch in which nothing changed cannot make progress.
		if n < batch || len(changed) == 0 {
			return total, nil
		}
	}
}
