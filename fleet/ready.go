package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ReadyTimeout bounds Ready: it answers within it whatever the store does,
// even when the store ignores its context.
const ReadyTimeout = 1500 * time.Millisecond

// readyProbe is the one store Ping in progress: callers of Ready at the same
// time wait for the same one, so a store that hangs costs one goroutine, not
// one per probe.
type readyProbe struct {
	mu  sync.Mutex
	cur *probe
}

type probe struct {
	done chan struct{}
	err  error
}

// Ready reports whether the store is reachable: nil, or unavailable when
// the store's Ping fails or does not answer within ReadyTimeout (or before
// ctx ends), with why in its cause.
func (s *Service) Ready(ctx context.Context) error {
	p := s.ready.start(s.store)
	timer := time.NewTimer(ReadyTimeout)
	defer timer.Stop()
	var cause error
	select {
	case <-p.done:
		if p.err == nil {
			return nil
		}
		cause = p.err
	case <-timer.C:
		cause = fmt.Errorf("the store did not answer within %v", ReadyTimeout)
	case <-ctx.Done():
		cause = ctx.Err()
	}
	return &Error{Code: CodeUnavailable, Message: "The store is unreachable.", Err: cause}
}

// start returns the probe in progress, or starts one.
func (r *readyProbe) start(store Store) *probe {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		return r.cur
	}
	p := &probe{done: make(chan struct{})}
	r.cur = p
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), ReadyTimeout)
		p.err = store.Ping(ctx)
		cancel()
		r.mu.Lock()
		r.cur = nil
		r.mu.Unlock()
		close(p.done)
	}()
	return p
}
