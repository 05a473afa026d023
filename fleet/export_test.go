package fleet

import (
	"context"
	"time"
)

// Hooks for the tests of package fleet_test.

// SetJudging makes s call f as a location batch starts being judged outside
// the write transaction.
func SetJudging(s *Service, f func(accountID string)) { s.judging = f }

// SetJudgeBudget sets the work a batch's judgement may take inside the
// write transaction; 0 judges every batch outside it first.
func SetJudgeBudget(s *Service, work int) { s.judgeBudget = work }

// AlertCacheStats returns how many compiled configurations s keeps and
// their estimated bytes.
func AlertCacheStats(s *Service) (entries, bytes int) { return s.alertCache.stats() }

// SetTripTracking turns the trip tracking of the ingest on or off.
func SetTripTracking(s *Service, on bool) { s.noTrips = !on }

// SetPasswordHashStarted makes s call f as each password hash starts, with
// how many run at once.
func SetPasswordHashStarted(s *Service, f func(running int)) { s.hashes.Started = f }

// SetPasswordHashWait sets how long an attempt waits for a hash slot.
func SetPasswordHashWait(s *Service, d time.Duration) { s.hashes.Wait = d }

// SetLoginSubjectsMax bounds how many subjects s's sign-in throttle follows.
func SetLoginSubjectsMax(s *Service, n int) { s.logins.max = n }

// LoginSubjects returns how many subjects s's sign-in throttle follows.
func LoginSubjects(s *Service) int { return s.logins.size() }

// AssignByIdentifier does what the ingest does for a forward point of the
// vehicle whose driver_identifier attribute is identifier, at the point's
// time at: the account's driver with that key (none when no driver has
// it) drives the vehicle, through assignDriver. It reports whether the
// vehicle's driver changed.
func AssignByIdentifier(s *Service, accountID, vehicleID, identifier string, at time.Time) (bool, error) {
	var changed bool
	err := s.update(context.Background(), func(tx Tx) error {
		v, err := tx.Vehicle(accountID, vehicleID)
		if err != nil {
			return err
		}
		var d *Driver
		switch dr, err := tx.DriverByIdentifier(accountID, identifier); {
		case err == nil:
			d = &dr
		case ErrorCode(err) != CodeNotFound:
			return err
		}
		changed, err = s.assignDriver(tx, &v, d, identifier, at, s.Now())
		return err
	})
	return changed, err
}
