package fleet

import (
	"sync/atomic"
	"time"
)

// Stats are what the service has done since it started, for a server's
// metrics. Counting is an atomic add; Stats reads them.
type Stats struct {
	// PointsIngested counts the location points stored (duplicates of
	// stored points not included).
	PointsIngested uint64
	// QuotaRejections counts requests refused for the hourly allowance:
	// of a key (Key) and of a client address without a valid key
	// (Address).
	QuotaRejections struct{ Key, Address uint64 }
	// StreamClients is how many live streams are open now.
	StreamClients int
	// Devices count the device edge's work: Reports of registered devices
	// handled (acknowledged or not), Unknown attempts (logins and reports)
	// of identifiers no device has, and of those the UnknownRecorded in
	// the operator's list (an address's attempts past
	// UnknownRecordsPerMinute are counted only).
	Devices struct{ Reports, Unknown, UnknownRecorded uint64 }
	// DeviceAttributesDropped counts the attributes of devices' positions
	// dropped for breaking API.md §14's rules (a device cannot be told:
	// the position is kept without them).
	DeviceAttributesDropped uint64
	// Jobs are the background jobs Run runs, in the order of JobNames.
	Jobs [len(JobNames)]JobStats
}

// JobNames name the background jobs of Run: usage flush, the check of live
// streams' keys and share links, the vehicle status sweep (with the offline alerts),
// maintenance schedule checks, and purges.
var JobNames = [...]string{"flush", "check_streams", "sweep", "check_maintenance", "purge"}

const (
	jobFlush = iota
	jobCheckStreams
	jobSweep
	jobCheckMaintenance
	jobPurge
)

// JobBounds are the upper bounds, in seconds, of JobStats.Buckets.
var JobBounds = [...]float64{0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10, 60}

// JobStats are a background job's runs and how long they took.
type JobStats struct {
	Runs, Failures uint64
	// Seconds is the total time of the runs.
	Seconds float64
	// Buckets count the runs by duration: Buckets[i] those of at most
	// JobBounds[i] (and more than the bound before), the last those longer
	// than every bound.
	Buckets [len(JobBounds) + 1]uint64
}

// stats are the counters behind Stats.
type stats struct {
	points          atomic.Uint64
	rejectedKey     atomic.Uint64
	rejectedAddress atomic.Uint64
	jobs            [len(JobNames)]jobStats

	deviceReports, deviceUnknown, deviceUnknownRecorded atomic.Uint64
	deviceAttrsDropped                                  atomic.Uint64
}

type jobStats struct {
	runs, failures atomic.Uint64
	ns             atomic.Uint64
	buckets        [len(JobBounds) + 1]atomic.Uint64
}

// job records a run of job i that started at start.
func (st *stats) job(i int, start time.Time, err error) {
	d := time.Since(start)
	j := &st.jobs[i]
	j.runs.Add(1)
	if err != nil {
		j.failures.Add(1)
	}
	j.ns.Add(uint64(d))
	b := 0
	for b < len(JobBounds) && d.Seconds() > JobBounds[b] {
		b++
	}
	j.buckets[b].Add(1)
}

// Stats returns the service's counters now.
func (s *Service) Stats() Stats {
	var out Stats
	out.PointsIngested = s.stats.points.Load()
	out.QuotaRejections.Key = s.stats.rejectedKey.Load()
	out.QuotaRejections.Address = s.stats.rejectedAddress.Load()
	out.StreamClients = s.stream.Clients()
	out.Devices.Reports = s.stats.deviceReports.Load()
	out.Devices.Unknown = s.stats.deviceUnknown.Load()
	out.Devices.UnknownRecorded = s.stats.deviceUnknownRecorded.Load()
	out.DeviceAttributesDropped = s.stats.deviceAttrsDropped.Load()
	for i := range s.stats.jobs {
		j := &s.stats.jobs[i]
		o := &out.Jobs[i]
		o.Runs, o.Failures = j.runs.Load(), j.failures.Load()
		o.Seconds = float64(j.ns.Load()) / 1e9
		for b := range j.buckets {
			o.Buckets[b] = j.buckets[b].Load()
		}
	}
	return out
}
