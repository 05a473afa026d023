// Package geotest makes the rings that stress a geofence's edge index,
// for the tests and benchmarks of package geo and of package fleet's rules
// that use geofences: combs whose teeth run north-south (every edge spans
// almost every latitude) or east-west (each edge spans a sliver), stars
// (long spikes meeting near the centre), a staircase of axis-parallel
// edges (many vertices at each latitude), and random, self-crossing rings.
// Each is a closed GeoJSON linear ring of [longitude, latitude] positions.
package geotest

import (
	"math"
	"math/rand/v2"
)

// Comb is a closed ring of about n positions: a base along the south of the
// box (clon±w/2, clat±h/2) with teeth reaching north, so every tooth edge
// spans 90% of the box's latitudes.
func Comb(clon, clat, w, h float64, n int) [][]float64 {
	teeth := (n - 3) / 2
	ring := make([][]float64, 0, n)
	for i := range teeth {
		x := clon - w/2 + w*float64(i)/float64(teeth)
		y := clat + h/2
		if i%2 == 1 {
			y = clat - h/2 + h*0.1
		}
		ring = append(ring, []float64{x, y}, []float64{x + w/float64(teeth)/2, y})
	}
	ring = append(ring, []float64{clon + w/2, clat - h/2}, []float64{clon - w/2, clat - h/2})
	return append(ring, ring[0])
}

// Sideways is Comb turned a quarter: teeth reaching east, edges short in
// latitude.
func Sideways(clon, clat, w, h float64, n int) [][]float64 {
	r := Comb(clat, clon, h, w, n)
	out := make([][]float64, len(r))
	for i, p := range r {
		out[len(r)-1-i] = []float64{p[1], p[0]}
	}
	return out
}

// Star is a closed ring of n positions around (clon, clat): spikes of
// radius rad degrees between points near the centre.
func Star(clon, clat, rad float64, n int, rng *rand.Rand) [][]float64 {
	ring := make([][]float64, 0, n)
	for i := range n - 1 {
		a := 2 * math.Pi * float64(i) / float64(n-1)
		r := rad
		if i%2 == 1 {
			r = rad * (0.01 + 0.05*rng.Float64())
		}
		ring = append(ring, []float64{clon + r*math.Cos(a), clat + r*math.Sin(a)})
	}
	return append(ring, ring[0])
}

// Staircase is a closed ring of about n positions whose edges run along
// meridians and parallels, in steps of 0.1 degrees from (0, 0).
func Staircase(n int) [][]float64 {
	steps := (n - 3) / 2
	ring := [][]float64{{0, 0}}
	for i := range steps {
		ring = append(ring, []float64{0.1 * float64(i+1), 0.1 * float64(i)}, []float64{0.1 * float64(i+1), 0.1 * float64(i+1)})
	}
	ring = append(ring, []float64{0, 0.1 * float64(steps)})
	return append(ring, ring[0])
}

// Scribble is a closed ring of n random positions in 0..10 degrees, which
// crosses itself.
func Scribble(n int, rng *rand.Rand) [][]float64 {
	ring := make([][]float64, 0, n)
	for range n - 1 {
		// Coarse coordinates: many vertices share a latitude.
		ring = append(ring, []float64{math.Round(rng.Float64()*40) / 4, math.Round(rng.Float64()*40) / 4})
	}
	return append(ring, ring[0])
}

// Square is the ring of the square 0..10 x 0..10 degrees.
func Square() [][]float64 { return [][]float64{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}} }

// Hole is the ring of the square 4..6 x 4..6 degrees: a hole in Square.
func Hole() [][]float64 { return [][]float64{{4, 4}, {4, 6}, {6, 6}, {6, 4}, {4, 4}} }

// Wrapped is a ring crossing the antimeridian, written as RFC 7946 forbids
// but clients send: longitudes jump from 170 to -170. It spans 170 to 190
// (-170) degrees of longitude, -10 to 10 of latitude.
func Wrapped() [][]float64 {
	return [][]float64{{170, -10}, {-170, -10}, {-170, 10}, {170, 10}, {170, -10}}
}
