package fleet

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/fleetkit/fleetapi/fleet/internal/cache"
	"github.com/fleetkit/fleetapi/fleet/internal/geo"
)

// alertConfig is an account's enabled rules compiled for judging location
// reports: speeding thresholds in order, vehicle_offline silences in order,
// and the geofences rules watch, compiled, with an index of where they are.
// It is read-only once built, so ingests share it; version is the account's
// alert configuration version it was built from.
type alertConfig struct {
	version    int64
	rules      []*crule  // every enabled rule; crule.n is its position
	speeding   []*crule  // by threshold, then id
	thresholds []float64 // speeding[i]'s threshold
	offline    []*crule  // by after_minutes, then id
	telem      []*crule  // the telematics rules (alarm, ignition_on...), by id
	fences     []fence   // by geofence id, those that rules watch
	index      fenceIndex
	size       int // estimated bytes
}

// crule is a rule compiled: ids are the vehicles it watches, sorted, nil
// for every vehicle; n is its position in alertConfig.rules; hours, for an
// ignition_on rule with working hours, those hours compiled.
type crule struct {
	*AlertRule
	n     int32
	ids   []string
	hours *hours
}

// applies is AlertRule.Applies by binary search.
func (r *crule) applies(vehicleID string) bool {
	if r.ids == nil {
		return true
	}
	_, ok := slices.BinarySearch(r.ids, vehicleID)
	return ok
}

// fence is a geofence compiled, with the rules that watch it (by id).
type fence struct {
	id, name    string
	s           geo.Shape
	enter, exit []*crule
}

// compileConfig builds the configuration of version from the account's
// enabled rules and the geofences they name. The geofences' positions are
// kept only in their compiled shapes.
func compileConfig(version int64, rules []AlertRule, geos []Geofence) *alertConfig {
	cfg := &alertConfig{version: version}
	slices.SortFunc(geos, func(a, b Geofence) int { return strings.Compare(a.ID, b.ID) })
	byID := make(map[string]int32, len(geos))
	for i := range geos {
		byID[geos[i].ID] = int32(len(cfg.fences))
		cfg.fences = append(cfg.fences, fence{id: geos[i].ID, name: geos[i].Name, s: compile(&geos[i])})
	}
	slices.SortFunc(rules, func(a, b AlertRule) int { return strings.Compare(a.ID, b.ID) })
	for i := range rules {
		r := &crule{AlertRule: &rules[i], n: int32(len(cfg.rules))}
		if len(r.VehicleIDs) > 0 {
			r.ids = slices.Sorted(slices.Values(r.VehicleIDs))
		}
		switch r.Type {
		case AlertSpeeding:
			cfg.speeding = append(cfg.speeding, r)
		case AlertVehicleOffline:
			cfg.offline = append(cfg.offline, r)
		case AlertAlarm, AlertIgnitionOn, AlertIdling, AlertFuelDrop, AlertHarshDriving, AlertPowerCut:
			if h := r.OutsideHours; h != nil && r.Type == AlertIgnitionOn {
				var err error
				if r.hours, err = h.compile(); err != nil {
					continue // a zone this server cannot load judges nothing
				}
			}
			cfg.telem = append(cfg.telem, r)
		case AlertGeofenceEnter, AlertGeofenceExit:
			gi, ok := byID[r.GeofenceID]
			if !ok {
				continue
			}
			if r.Type == AlertGeofenceEnter {
				cfg.fences[gi].enter = append(cfg.fences[gi].enter, r)
			} else {
				cfg.fences[gi].exit = append(cfg.fences[gi].exit, r)
			}
		default:
			continue
		}
		cfg.rules = append(cfg.rules, r)
	}
	slices.SortStableFunc(cfg.speeding, func(a, b *crule) int { return cmp.Compare(*a.ThresholdKmh, *b.ThresholdKmh) })
	for _, r := range cfg.speeding {
		cfg.thresholds = append(cfg.thresholds, *r.ThresholdKmh)
	}
	slices.SortStableFunc(cfg.offline, func(a, b *crule) int { return cmp.Compare(*a.AfterMinutes, *b.AfterMinutes) })
	cfg.index = indexFences(cfg.fences)
	cfg.size = cfg.estimate()
	return cfg
}

// estimate is the configuration's memory in bytes, near enough to bound a
// cache of many.
func (cfg *alertConfig) estimate() int {
	n := 512 + 8*len(cfg.thresholds) + 8*(len(cfg.speeding)+len(cfg.offline)+len(cfg.telem))
	for _, r := range cfg.rules {
		n += 400 + len(r.ID) + len(r.GeofenceID) + 40*len(r.VehicleIDs) + 16*len(r.ids)
		n += 24 * (len(r.Alarms) + len(r.Types))
		if r.hours != nil {
			n += 64 // its zone is shared by every rule that names it
		}
	}
	for i := range cfg.fences {
		f := &cfg.fences[i]
		n += 300 + len(f.id) + len(f.name) + 8*(len(f.enter)+len(f.exit))
		n += f.s.Size()
	}
	return n + cfg.index.size()
}

// Where a point is looked up: grids of square cells, each fence on the
// finest grid where its bounding box (and a cell of margin) meets at most
// maxFenceCells cells, or, if none, on a list tested for every point. A
// point's cost so depends on the fences whose box is near it, and a fence
// takes a few entries whatever its size. Cell sizes divide 360 degrees, so
// longitudes one turn apart share cells.
var gridLevels = [...]struct {
	deg  float64
	turn int64 // cells in 360 degrees of longitude
}{{0.05, 7200}, {0.4, 900}, {3.6, 100}, {36, 10}}

const maxFenceCells = 36

// fenceIndex finds the fences whose bounding box may hold a point.
type fenceIndex struct {
	grids   [len(gridLevels)]map[int64][]int32 // cell -> fences
	world   []int32                            // fences on no grid
	entries int
}

func indexFences(fences []fence) fenceIndex {
	var ix fenceIndex
	for i := range fences {
		f := &fences[i]
		if len(f.enter)+len(f.exit) == 0 {
			continue
		}
		if !ix.place(f.s.Box(), int32(i)) {
			ix.world = append(ix.world, int32(i))
		}
	}
	return ix
}

// place puts fence i on the finest grid that takes its box; false if none
// does.
func (ix *fenceIndex) place(box geo.Box, i int32) bool {
	if box.AllLon {
		return false
	}
	for l, g := range gridLevels {
		lat0, lat1 := cellOf(box.MinLat, g.deg)-1, cellOf(box.MaxLat, g.deg)+1
		lon0, lon1 := cellOf(box.MinLon, g.deg)-1, cellOf(box.MaxLon, g.deg)+1
		if lon1-lon0+1 >= g.turn || (lat1-lat0+1)*(lon1-lon0+1) > maxFenceCells {
			continue
		}
		if ix.grids[l] == nil {
			ix.grids[l] = map[int64][]int32{}
		}
		for la := lat0; la <= lat1; la++ {
			for lo := lon0; lo <= lon1; lo++ {
				k := cellKey(la, lo, g.turn)
				ix.grids[l][k] = append(ix.grids[l][k], i)
				ix.entries++
			}
		}
		return true
	}
	return false
}

func cellOf(deg, size float64) int64 { return int64(math.Floor(deg / size)) }

// cellKey names a cell of a grid with turn cells around; longitudes one
// turn apart name the same cell.
func cellKey(latCell, lonCell, turn int64) int64 {
	lo := ((lonCell+turn/2)%turn+turn)%turn - turn/2
	return latCell*turn*2 + lo
}

func (ix *fenceIndex) size() int { return 64*ix.entries + 4*len(ix.world) }

// empty reports whether no fence is watched.
func (ix *fenceIndex) empty() bool { return ix.entries == 0 && len(ix.world) == 0 }

// alertCache keeps accounts' compiled configurations, at most max bytes of
// them by their estimates, dropping the least recently used first; a
// configuration larger than max alone is not kept. An entry serves an
// ingest only when its version is the one the ingest reads from the store,
// which every rule or geofence change moves forward (in the change's
// transaction, through whichever server makes it), so a server never judges
// with rules another server has changed since.
type alertCache struct{ cache.LRU[*alertConfig] }

func (c *alertCache) init(max int) {
	c.Init(max, func(cfg *alertConfig) int64 { return cfg.version }, func(cfg *alertConfig) int { return cfg.size })
}

// get returns the account's configuration of version, if kept.
func (c *alertCache) get(accountID string, version int64) *alertConfig {
	return c.Get(accountID, version)
}

// latest returns the account's configuration of whatever version is kept.
func (c *alertCache) latest(accountID string) *alertConfig { return c.Latest(accountID) }

// put keeps cfg as the account's configuration unless a newer one is kept,
// then drops the least recently used until the rest fit.
func (c *alertCache) put(accountID string, cfg *alertConfig) { c.Put(accountID, cfg) }

// stats returns how many configurations are kept and their estimated bytes.
func (c *alertCache) stats() (entries, bytes int) { return c.Stats() }
