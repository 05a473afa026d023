package fleet

import (
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"
)

// At its bound, with every subject holding the most attempt times it can,
// the sign-in throttle takes less than 64 MiB, however many subjects an
// attacker rotates through.
func TestLoginThrottleMemoryAtItsBound(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := heap()
	var l loginThrottle
	l.init(MaxLoginSubjects)
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for i := range MaxLoginSubjects + MaxLoginSubjects/2 {
		k := keyOf("addr", "10.0."+strconv.Itoa(i))
		for j := range maxTimes {
			if _, wait := l.admit(now.Add(time.Duration(j)), limit{k, maxTimes}); wait > 0 {
				t.Fatalf("attempt %d of %d refused", j+1, maxTimes)
			}
		}
	}
	if n := l.size(); n != MaxLoginSubjects {
		t.Fatalf("the throttle follows %d subjects, want %d", n, MaxLoginSubjects)
	}
	used := heap() - before
	t.Logf("%d subjects of %d attempts each: %.1f MiB", MaxLoginSubjects, maxTimes, float64(used)/(1<<20))
	if used > 64<<20 {
		t.Fatalf("the throttle takes %d bytes at its bound, want at most 64 MiB", used)
	}
	runtime.KeepAlive(&l)
}
