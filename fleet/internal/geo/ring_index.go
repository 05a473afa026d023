package geo

import (
	"math"
	"slices"
	"sort"
)

// ringIndex buckets the edges of one ring by latitude band, so that the
// even-odd ray cast of a position (see edgeTest) looks at the edges near the
// position's latitude instead of at every edge of the ring.
//
// Band b holds the latitudes bounds[b] <= y < bounds[b+1]. Band boundaries
// are vertex latitudes, with at most a few vertices strictly inside a band
// (fewer, taller bands where edges are long: an edge is listed in every band
// it meets, and the lists together hold at most maxEntriesPerEdge entries
// per edge). In a band, an edge that spans it whole ("full") crosses the
// ray of every position in the band that lies west of it; an edge with an
// end inside the band ("part") is tested on its own; an edge that only comes
// within the boundary tolerance of the band from below or above, or lies
// along its boundary, can hold a position near that boundary but cross no
// ray in the band, and is tested only for positions that near. Full edges of
// a ring that does not cross itself never cross each other inside the band,
// so they keep one west-to-east order at every latitude of it, and a binary
// search counts those east of a position: a comb of a thousand tall teeth
// costs about ten edge tests, not a thousand. Where full edges do cross (a
// self-intersecting ring), the band tests them one by one.
type ringIndex struct {
	bounds []float64 // band boundaries, vertex latitudes, ascending
	// Band b's lists are edges[off[4b]:off[4b+1]] (full),
	// [off[4b+1]:off[4b+2]] (part), [off[4b+2]:off[4b+3]] (below: within
	// the tolerance under its lower boundary, or along it) and
	// [off[4b+3]:off[4b+4]] (above: from its upper boundary up).
	off       []uint32
	edges     []uint16
	unordered []bool // band b's full edges cannot be ordered
}

// Index sizes: rings of up to minIndexedEdges edges are tested edge by
// edge; a band holds at most bandVertices vertices strictly inside it to
// begin with, and the bands' lists at most maxEntriesPerEdge entries per
// edge.
const (
	minIndexedEdges   = 32
	bandVertices      = 4
	maxEntriesPerEdge = 8
)

// Kinds of an edge's entry in a band, in the order of a band's lists.
const (
	entryFull = iota
	entryPart
	entryBelow
	entryAbove
	entryKinds
)

// indexRing builds the index of a flat closed ring (x0, y0, x1, y1, ...);
// nil for a ring short enough to test edge by edge.
func indexRing(r []float64) *ringIndex {
	n := len(r) / 2
	if n <= minIndexedEdges || n > math.MaxUint16 {
		return nil
	}
	ys := make([]float64, n)
	for k := range n {
		ys[k] = r[2*k+1]
	}
	slices.Sort(ys)
	if ys[0] == ys[n-1] {
		return nil // every vertex at one latitude: no area
	}
	var bounds []float64
	for per := bandVertices; ; per *= 2 {
		bounds = chooseBounds(bounds[:0], ys, per)
		entries := 0
		for k := range n {
			lo, hi := edgeBands(r, k, bounds)
			entries += hi - lo + 1
		}
		if entries <= maxEntriesPerEdge*n || len(bounds) == 2 {
			break
		}
	}
	nb := len(bounds) - 1
	// Count each band's lists, then fill them in place.
	counts := make([]uint32, entryKinds*nb+1)
	forEachEntry(r, bounds, func(b, kind, _ int) { counts[entryKinds*b+kind+1]++ })
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	ix := &ringIndex{bounds: bounds, off: counts, edges: make([]uint16, counts[len(counts)-1]), unordered: make([]bool, nb)}
	next := slices.Clone(counts[:len(counts)-1])
	forEachEntry(r, bounds, func(b, kind, k int) {
		i := entryKinds*b + kind
		ix.edges[next[i]] = uint16(k)
		next[i]++
	})
	for b := range nb {
		ix.order(r, b)
	}
	return ix
}

// chooseBounds picks band boundaries among the sorted vertex latitudes ys:
// the lowest and the highest, and enough between them that no band holds
// more than per vertices strictly inside it.
func chooseBounds(bounds, ys []float64, per int) []float64 {
	bounds = append(bounds, ys[0])
	inside := 0
	for i := 0; i < len(ys); {
		j := i // ys[i:j] share a latitude
		for j < len(ys) && ys[j] == ys[i] {
			j++
		}
		y := ys[i]
		switch {
		case y == bounds[len(bounds)-1]:
		case j == len(ys) || inside+j-i > per:
			bounds = append(bounds, y)
			inside = 0
		default:
			inside += j - i
		}
		i = j
	}
	return bounds
}

// forEachEntry calls fn for each band an edge is listed in, with the kind
// of its entry there.
func forEachEntry(r []float64, bounds []float64, fn func(band, kind, edge int)) {
	for k := range len(r) / 2 {
		ylo, yhi := edgeLat(r, k)
		lo, hi := edgeBands(r, k, bounds)
		for b := lo; b <= hi; b++ {
			b0, b1 := bounds[b], bounds[b+1]
			kind := entryPart
			switch {
			case yhi <= b0:
				kind = entryBelow
			case ylo >= b1:
				kind = entryAbove
			case ylo <= b0 && yhi >= b1:
				kind = entryFull
			}
			fn(b, kind, k)
		}
	}
}

func (ix *ringIndex) list(b, kind int) []uint16 {
	i := entryKinds*b + kind
	return ix.edges[ix.off[i]:ix.off[i+1]]
}

// edgeLat returns the latitude range of edge k (see edgeTest).
func edgeLat(r []float64, k int) (lo, hi float64) {
	j := k - 1
	if k == 0 {
		j = len(r)/2 - 1
	}
	lo, hi = r[2*k+1], r[2*j+1]
	if lo > hi {
		lo, hi = hi, lo
	}
	return lo, hi
}

// edgeBands returns the first and last band that edge k meets, with the
// boundary tolerance: an edge within geoEps of a band is listed in it, so
// that the on-edge test finds it.
func edgeBands(r []float64, k int, bounds []float64) (lo, hi int) {
	ylo, yhi := edgeLat(r, k)
	return bandOf(bounds, ylo-geoEps), bandOf(bounds, yhi+geoEps)
}

// bandOf returns the band holding latitude y, the first or last band for a
// latitude below or above them all.
func bandOf(bounds []float64, y float64) int {
	b := sort.SearchFloat64s(bounds, y) // first bound >= y
	if b < len(bounds) && bounds[b] == y {
		b++
	}
	return min(max(b-1, 0), len(bounds)-2)
}

// order sorts band b's full edges west to east at its middle latitude and
// keeps that order if it holds at both of its boundaries too (up to the
// boundary tolerance: edges that share a vertex there tie). Two straight
// edges that cross inside the band swap order between its boundaries, so an
// order that holds at both holds across the band.
func (ix *ringIndex) order(r []float64, b int) {
	full := ix.list(b, entryFull)
	if len(full) < 2 {
		return
	}
	y0, y1 := ix.bounds[b], ix.bounds[b+1]
	mid := y0 + (y1-y0)/2
	slices.SortFunc(full, func(e, f uint16) int {
		return cmpFloat(fullX(r, int(e), mid), fullX(r, int(f), mid))
	})
	for _, y := range [2]float64{y0, y1} {
		for i := 1; i < len(full); i++ {
			if fullX(r, int(full[i-1]), y) > fullX(r, int(full[i]), y)+geoEps {
				ix.unordered[b] = true
				return
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fullX is the longitude of edge k at latitude y, computed as edgeTest
// computes it. Edge k spans a band, so it is not horizontal.
func fullX(r []float64, k int, y float64) float64 {
	j := k - 1
	if k == 0 {
		j = len(r)/2 - 1
	}
	return edgeX(r[2*k], r[2*k+1], r[2*j], r[2*j+1], y)
}

// test is pointInRing through the index: the same answer, edge for edge,
// from the edges near latitude y. It adds to *work the edges it tested.
func (ix *ringIndex) test(r []float64, x, y float64, work *int) (inside, onEdge bool) {
	last := len(ix.bounds) - 1
	if y < ix.bounds[0]-geoEps || y > ix.bounds[last]+geoEps {
		return false, false // no edge within reach
	}
	b := bandOf(ix.bounds, y)
	// Below the lowest vertex or level with the highest no edge crosses
	// the ray, but the position may still lie on one.
	crossing := y >= ix.bounds[0] && y < ix.bounds[last]
	lists := make([][]uint16, 3, 4)
	lists[0] = ix.list(b, entryPart)
	if y-ix.bounds[b] <= geoEps {
		lists[1] = ix.list(b, entryBelow)
	}
	if ix.bounds[b+1]-y <= geoEps {
		lists[2] = ix.list(b, entryAbove)
	}
	full := ix.list(b, entryFull)
	if ix.unordered[b] {
		lists = append(lists, full)
	}
	for _, list := range lists {
		*work += len(list)
		for _, k := range list {
			cross, edge := edgeTest(r, int(k), x, y)
			if edge {
				return false, true
			}
			if cross && crossing {
				inside = !inside
			}
		}
	}
	if ix.unordered[b] {
		return inside, false
	}
	// The full edges east of x are those from i on: each crosses the ray
	// (it spans y, and x < its longitude at y), the others do not.
	i := sort.Search(len(full), func(i int) bool { return x < fullX(r, int(full[i]), y) })
	*work += bitsLen(len(full))
	// The position may lie on an edge next to where it falls in the order
	// (rounding may place it one off).
	for _, k := range full[max(i-2, 0):min(i+2, len(full))] {
		*work++
		if _, edge := edgeTest(r, int(k), x, y); edge {
			return false, true
		}
	}
	if crossing && (len(full)-i)%2 == 1 {
		inside = !inside
	}
	return inside, false
}

// bitsLen is the number of steps of a binary search over n items.
func bitsLen(n int) int {
	steps := 0
	for ; n > 0; n >>= 1 {
		steps++
	}
	return steps
}

// size estimates the index's memory in bytes.
func (ix *ringIndex) size() int {
	if ix == nil {
		return 0
	}
	return 96 + 8*len(ix.bounds) + 4*len(ix.off) + 2*len(ix.edges) + len(ix.unordered)
}
