package fleet

// JSON allows -0, and it decodes to IEEE negative zero: equal to 0, but
// written back as -0 and told apart from 0 by whatever hashes, sorts or
// prints it. Every number a request stores (coordinates, speed, heading,
// odometer readings, geofence positions) is stored as 0 instead: each
// type's normalisation, or its validate where it has none, applies these.

// unsignedZero returns f, or 0 for -0.
func unsignedZero(f float64) float64 {
	if f == 0 {
		return 0
	}
	return f
}

// unsignedZeroPtr returns p, or a pointer to 0 when p points to -0 (a new
// one: the caller's memory is left as it is).
func unsignedZeroPtr(p *float64) *float64 {
	if p != nil && *p == 0 {
		return new(float64)
	}
	return p
}
