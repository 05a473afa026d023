package fleet

import (
	"strconv"
	"time"
)

func itoa(i int) string { return strconv.Itoa(i) }

// Timestamp normalises t as every stored and returned time is: UTC, with
// microsecond precision (what PostgreSQL keeps).
func Timestamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func ptr[T any](v T) *T { return &v }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
