package fleet

import (
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/cache"
	"github.com/fleetkit/fleetapi/fleet/internal/unknownlimit"
)

// deviceCache holds routes by identifier (cache.Fresh), each trusted while
// fresh. Its generation moves with every forget, so that a route read
// before a change is not kept after it.
type deviceCache struct{ cache.Fresh[deviceRoute] }

func (c *deviceCache) init() {
	c.Init(maxCachedRoutes, func(r deviceRoute, now time.Time) bool { return r.fresh(now) })
}

func (c *deviceCache) get(identifier string, now time.Time) (deviceRoute, uint64, bool) {
	return c.Get(identifier, now)
}

// put keeps r unless the cache changed since gen.
func (c *deviceCache) put(identifier string, r deviceRoute, gen uint64, now time.Time) {
	c.Put(identifier, r, gen, now)
}

// forget drops an identifier's route (a device registered, changed or
// deleted here).
func (c *deviceCache) forget(identifier string) { c.Forget(identifier) }

// forgetVehicle drops the routes to a vehicle (deleted here).
func (c *deviceCache) forgetVehicle(vehicleID string) {
	c.ForgetIf(func(r deviceRoute) bool { return r.vehicleID == vehicleID })
}

// unknownLimit counts, per address, the attempts of unknown identifiers
// recorded in the current minute (UnknownRecordsPerMinute), and bounds the
// records of all addresses together to UnknownRecordsPerSecond
// (unknownlimit.Limit).
type unknownLimit struct{ unknownlimit.Limit }

func (l *unknownLimit) init() {
	l.Init(UnknownRecordsPerSecond, UnknownRecordsPerMinute, maxUnknownAddresses)
}

// allow reports whether one more attempt from host may be recorded at now:
// within its address's minute, and within the server's second.
func (l *unknownLimit) allow(host string, now time.Time) bool { return l.Allow(host, now) }
