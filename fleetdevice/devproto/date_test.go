package devproto

import (
	"testing"
	"time"
)

func TestCivilTime(t *testing.T) {
	for _, c := range []struct {
		y, mo, d, h, mi, s int
		want               time.Time // zero: no such time
	}{
		{26, 5, 1, 12, 30, 45, time.Date(2026, 5, 1, 12, 30, 45, 0, time.UTC)}, // yy is 20yy
		{2024, 2, 29, 0, 0, 0, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},   // a leap day
		{2026, 12, 31, 23, 59, 59, time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)},
		{2023, 2, 29, 0, 0, 0, time.Time{}}, // not a leap year
		{2026, 4, 31, 0, 0, 0, time.Time{}},
		{2026, 10, 32, 0, 0, 0, time.Time{}},
		{2026, 10, 0, 0, 0, 0, time.Time{}},
		{2026, 0, 1, 0, 0, 0, time.Time{}},
		{2026, 13, 1, 0, 0, 0, time.Time{}},
		{2026, 1, 1, 24, 0, 0, time.Time{}},
		{2026, 1, 1, 25, 0, 0, time.Time{}},
		{2026, 1, 1, 0, 60, 0, time.Time{}},
		{2026, 1, 1, 0, 0, 60, time.Time{}}, // no protocol here sends a leap second
		{2026, 1, 1, 0, 0, 99, time.Time{}},
		{2026, 1, 1, -1, 0, 0, time.Time{}},
		{10000, 1, 1, 0, 0, 0, time.Time{}},
	} {
		got, ok := CivilTime(c.y, c.mo, c.d, c.h, c.mi, c.s)
		if ok != !c.want.IsZero() || !got.Equal(c.want) {
			t.Errorf("civilTime(%d, %d, %d, %d, %d, %d) = %v, %v; want %v", c.y, c.mo, c.d, c.h, c.mi, c.s, got, ok, c.want)
		}
	}
}
