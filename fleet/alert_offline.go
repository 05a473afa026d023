package fleet

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// offlineBatch bounds the vehicles and rules one transaction of the offline
// check reads, and the alerts one opens.
const offlineBatch = 500

// offlineSweep is what a service remembers between offline checks: when
// the last one ran, and the enabled vehicle_offline rules it saw then, each
// by what its judgement depends on.
type offlineSweep struct {
	mu    sync.Mutex
	at    time.Time
	rules map[string]string // rule id -> ruleFingerprint
}

func ruleFingerprint(r *AlertRule) string {
	return strconv.Itoa(*r.AfterMinutes) + "/" + strings.Join(r.VehicleIDs, ",") + "/" + r.UpdatedAt.Format(time.RFC3339Nano)
}

// offlineCandidate is a vehicle whose silence may owe an alert of a rule.
type offlineCandidate struct {
	r *AlertRule
	v Vehicle
}

// CheckOfflineAlerts opens a vehicle_offline alert for each vehicle that an
// enabled vehicle_offline rule watches and that has not reported for the
// rule's after_minutes, at most once per silence: not while an alert of the
// rule for the vehicle is open or acknowledged, nor again for the same
// silence once it is resolved. Vehicles that never reported are not judged.
// Sweep runs it; it returns how many alerts it opened.
//
// Its cost follows what changed since its previous pass, not rules times
// vehicles: it reads the enabled vehicle_offline rules, and, in one scan
// (VehiclesGoneSilent), the vehicles whose silence reached one of their
// after_minutes since then; only those are judged. A rule that is new or
// changed since then is checked once against all its account's reported
// vehicles, and so is every rule on a service's first pass and after a
// pass that comes more than a minute after the previous one. (A silence
// that a batch of old reports starts already past a rule's after_minutes is
// judged by that batch, and one left unalerted while an earlier alert of
// the rule was open, by resolving that alert.)
func (j Jobs) CheckOfflineAlerts(ctx context.Context) (int, error) {
	s := j.s
	o := &s.offline
	o.mu.Lock()
	defer o.mu.Unlock()
	now := s.Now()
	rules, err := s.enabledOfflineRules(ctx)
	if err != nil {
		return 0, err
	}
	since := o.at
	full := since.IsZero() || now.Before(since) || now.Sub(since) > time.Minute
	seen := make(map[string]string, len(rules))
	byAccount := map[string][]*AlertRule{}
	var minutes []int
	var changed []*AlertRule
	for i := range rules {
		r := &rules[i]
		fp := ruleFingerprint(r)
		seen[r.ID] = fp
		if full || o.rules[r.ID] != fp {
			changed = append(changed, r)
			continue
		}
		byAccount[r.AccountID] = append(byAccount[r.AccountID], r)
		if !slices.Contains(minutes, *r.AfterMinutes) {
			minutes = append(minutes, *r.AfterMinutes)
		}
	}
	var cands []offlineCandidate
	if len(minutes) > 0 && now.After(since) {
		if cands, err = s.silencesReached(ctx, since, now, minutes, byAccount); err != nil {
			return 0, err
		}
	}
	for _, r := range changed {
		more, err := s.silentVehicles(ctx, r, now)
		if err != nil {
			return 0, err
		}
		cands = append(cands, more...)
	}
	opened, err := s.openOfflineAlerts(ctx, cands, now)
	if err != nil {
		return opened, err
	}
	o.at, o.rules = now, seen
	return opened, nil
}

// enabledOfflineRules reads every enabled vehicle_offline rule.
func (s *Service) enabledOfflineRules(ctx context.Context) ([]AlertRule, error) {
	var out []AlertRule
	after := ""
	for {
		var page []AlertRule
		err := s.view(ctx, func(tx Tx) (err error) {
			page, err = tx.EnabledRulesOfType(AlertVehicleOffline, after, offlineBatch)
			return err
		})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < offlineBatch {
			return out, nil
		}
		after = page[len(page)-1].ID
	}
}

// silencesReached returns, for the vehicles whose silence reached one of
// minutes after since and by now, the rules of their account with that
// many after_minutes that watch them.
func (s *Service) silencesReached(ctx context.Context, since, now time.Time, minutes []int, byAccount map[string][]*AlertRule) ([]offlineCandidate, error) {
	var out []offlineCandidate
	after := ""
	for {
		var vs []Vehicle
		err := s.view(ctx, func(tx Tx) (err error) {
			vs, err = tx.VehiclesGoneSilent(since, now, minutes, after, offlineBatch)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			reached := int(now.Sub(v.LastLocation.Timestamp) / time.Minute)
			for _, r := range byAccount[v.AccountID] {
				if *r.AfterMinutes == reached && r.Applies(v.ID) {
					out = append(out, offlineCandidate{r, v})
				}
			}
		}
		if len(vs) < offlineBatch {
			return out, nil
		}
		after = vs[len(vs)-1].ID
	}
}

// silentVehicles returns the reported vehicles rule r watches that have
// been silent for its after_minutes at now.
func (s *Service) silentVehicles(ctx context.Context, r *AlertRule, now time.Time) ([]offlineCandidate, error) {
	silentSince := now.Add(-time.Duration(*r.AfterMinutes) * time.Minute)
	var out []offlineCandidate
	after := ""
	for {
		var vs []Vehicle
		err := s.view(ctx, func(tx Tx) (err error) {
			vs, err = tx.Vehicles(r.AccountID, VehicleFilter{Reported: true, IDs: r.VehicleIDs}, Page{After: after, Limit: offlineBatch})
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if v.LastLocation != nil && !v.LastLocation.Timestamp.After(silentSince) {
				out = append(out, offlineCandidate{r, v})
			}
		}
		if len(vs) < offlineBatch {
			return out, nil
		}
		after = vs[len(vs)-1].ID
	}
}

// openOfflineAlerts opens the alerts the candidates' silences owe: first it
// drops, in a read transaction, those whose silence has its alert already,
// then opens the rest in write transactions that check again, on the
// vehicle as it is then.
func (s *Service) openOfflineAlerts(ctx context.Context, cands []offlineCandidate, now time.Time) (int, error) {
	owed := func(tx AlertTx, c *offlineCandidate, v *Vehicle) (bool, error) {
		st, err := latestState(tx, c.r.AccountID, c.r.ID, v.ID)
		if err != nil {
			return false, err
		}
		return !st.active && !(st.found && !st.created.Before(v.LastLocation.Timestamp)), nil
	}
	var due []offlineCandidate
	for start := 0; start < len(cands); start += offlineBatch {
		part := cands[start:min(start+offlineBatch, len(cands))]
		err := s.view(ctx, func(tx Tx) error {
			for i := range part {
				ok, err := owed(tx, &part[i], &part[i].v)
				if err != nil {
					return err
				}
				if ok {
					due = append(due, part[i])
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	total := 0
	for start := 0; start < len(due); start += offlineBatch {
		part := due[start:min(start+offlineBatch, len(due))]
		opened := 0
		err := s.update(ctx, func(tx Tx) error {
			opened = 0
			for i := range part {
				c := &part[i]
				v, err := tx.Vehicle(c.r.AccountID, c.v.ID)
				if ErrorCode(err) == CodeNotFound {
					continue
				}
				if err != nil {
					return err
				}
				if !samePosition(v.LastLocation, c.v.LastLocation) {
					continue // it reported meanwhile
				}
				ok, err := owed(tx, c, &v)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				msg, data := offlineAlert(c.r, &v, now)
				if err := s.openRuleAlert(tx, c.r, &v, msg, data, now); err != nil {
					return err
				}
				if err := tx.UpdateVehicle(v); err != nil {
					return err
				}
				opened++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += opened
	}
	return total, nil
}

// maintenanceAlert opens the alert a schedule's becoming due_soon or
// overdue owes, once per service cycle: its key names the schedule, the
// type and the cycle (the last service's date and odometer), so a cycle
// opens at most one alert of each type, whatever its status.
func (s *Service) maintenanceAlert(tx openAlertTx, sch Schedule, event string, now time.Time) error {
	typ, sev, what := AlertMaintenanceDueSoon, SeverityWarning, "due soon"
	if event == EventMaintenanceOverdue {
		typ, sev, what = AlertMaintenanceOverdue, SeverityCritical, "overdue"
	}
	key := sch.ID + alertKeySep + string(typ) + alertKeySep + sch.LastServiceDate + alertKeySep + formatNum(orZero(sch.LastServiceOdometerKm))
	if sch.LastServiceEngineHours != nil { // a cycle by engine hours too
		key += alertKeySep + formatNum(*sch.LastServiceEngineHours)
	}
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
