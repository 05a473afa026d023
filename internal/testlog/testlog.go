// Package testlog holds what tests use to read a server's log after the
// fact.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is a log sink safe for concurrent writers, which a test reads
// with String once the writes it waits for are done.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
