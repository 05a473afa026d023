package fleet

import "time"

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
