package fleethttp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// hungStore is a store whose Ping hangs until released, ignoring its
// context, as a database that accepts a connection and then says nothing.
type hungStore struct {
	*memstore.Store
	release chan struct{}
	pings   atomic.Int64 // Pings in progress
	most    atomic.Int64 // the most in progress at once
}

func (s *hungStore) Ping(ctx context.Context) error {
	n := s.pings.Add(1)
	defer s.pings.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	<-s.release
	return nil
}

// TestReadyzAnswersWithinTwoSecondsWhateverTheStoreDoes: /readyz is 503
// with Retry-After within 2 s while the store hangs, for many probes at
// once, which share one Ping; once the store answers it is 200 again.
func TestReadyzAnswersWithinTwoSecondsWhateverTheStoreDoes(t *testing.T) {
	is := is.New(t)
	store := &hungStore{Store: memstore.New(), release: make(chan struct{})}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := fleet.NewService(store, fleet.Options{Logger: log})
	h := fleethttp.NewHandler(svc, fleethttp.WithLogger(log))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			start := time.Now()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
			took := time.Since(start)
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
				t.Errorf("readyz on a hung store: %d %v", w.Code, w.Header())
			}
			if took >= 2*time.Second {
				t.Errorf("readyz took %v on a hung store", took)
			}
		})
	}
	wg.Wait()
	is.Equal(store.most.Load(), int64(1)) // one Ping for all the probes
	close(store.release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		if w.Code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz still %d after the store answered", w.Code)
		}
		time.Sleep(10 * time.Millisecond) // the hung Ping returns in its own goroutine
	}
}
