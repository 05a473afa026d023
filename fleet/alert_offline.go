package fleet

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// offlineBatch bounds the vehicles one transaction of the offline check
// reads.
const offlineBatch = 500

// CheckOfflineAlerts opens a vehicle_offline alert for each vehicle that an
// enabled vehicle_offline rule watches and that has not reported for the
// rule's after_minutes, at most once per silence: not while an alert of the
// rule for the vehicle is open or acknowledged, nor again for the same
// silence once it is resolved. Vehicles that never reported are not judged.
// Sweep runs it; it returns how many alerts it opened.
func (s *Service) CheckOfflineAlerts(ctx context.Context) (int, error) {
	total, after := 0, ""
	for {
		var rules []AlertRule
		err := s.view(ctx, func(tx Tx) (err error) {
			rules, err = tx.EnabledRulesOfType(AlertVehicleOffline, after, 100)
			return err
		})
		if err != nil {
			return total, err
		}
		for i := range rules {
			n, err := s.checkOfflineRule(ctx, rules[i])
			total += n
			if err != nil {
				return total, err
			}
			after = rules[i].ID
		}
		if len(rules) < 100 {
			return total, nil
		}
	}
}

func (s *Service) checkOfflineRule(ctx context.Context, r AlertRule) (int, error) {
	total, after := 0, ""
	for {
		now := s.Now()
		silentSince := now.Add(-time.Duration(*r.AfterMinutes) * time.Minute)
		n, opened := 0, 0
		err := s.update(ctx, func(tx Tx) error {
			n, opened = 0, 0
			vs, err := tx.Vehicles(r.AccountID, VehicleFilter{Reported: true, IDs: r.VehicleIDs}, Page{After: after, Limit: offlineBatch})
			if err != nil {
				return err
			}
			n = len(vs)
			for i := range vs {
				v := &vs[i]
				if v.LastLocation == nil || v.LastLocation.Timestamp.After(silentSince) {
					continue
				}
				key := ruleKey(r.ID, v.ID)
				last, err := tx.LatestAlert(r.AccountID, key)
				switch {
				case ErrorCode(err) == CodeNotFound:
				case err != nil:
					return err
				case last.Status.Active() || !last.CreatedAt.Before(v.LastLocation.Timestamp):
					continue // this silence has its alert
				}
				msg, data := offlineAlert(&r, v, now)
				if err := s.openRuleAlert(tx, &r, v, msg, data, now); err != nil {
					return err
				}
				if err := tx.UpdateVehicle(*v); err != nil {
					return err
				}
				opened++
			}
			if n > 0 {
				after = vs[n-1].ID
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += opened
		if n < offlineBatch {
			return total, nil
		}
	}
}

// maintenanceAlert opens the alert a schedule's becoming due_soon or
// overdue owes, once per service cycle: its key names the schedule, the
// type and the cycle (the last service's date and odometer), so a cycle
// opens at most one alert of each type, whatever its status.
func (s *Service) maintenanceAlert(tx Tx, sch Schedule, event string, now time.Time) error {
	typ, sev, what := AlertMaintenanceDueSoon, SeverityWarning, "due soon"
	if event == EventMaintenanceOverdue {
		typ, sev, what = AlertMaintenanceOverdue, SeverityCritical, "overdue"
	}
	key := sch.ID + alertKeySep + string(typ) + alertKeySep + sch.LastServiceDate + alertKeySep + formatNum(orZero(sch.LastServiceOdometerKm))
	_, err := tx.LatestAlert(sch.AccountID, key)
	if err == nil {
		return nil
	}
	if ErrorCode(err) != CodeNotFound {
		return err
	}
	data, err := json.Marshal(map[string]any{"schedule_id": sch.ID, "schedule_name": sch.Name, "next_due_date": nullString(sch.NextDueDate),
		"next_due_odometer_km": sch.NextDueOdometerKm, "last_service_date": sch.LastServiceDate})
	if err != nil {
		return err
	}
	return s.openAlert(tx, Alert{ID: NewID(PrefixAlert), AccountID: sch.AccountID, Type: typ, Severity: sev, Status: AlertOpen,
		VehicleID: sch.VehicleID, Message: "Maintenance " + strconv.Quote(sch.Name) + " is " + what + ".", Data: data, Key: key, CreatedAt: now}, now)
}
