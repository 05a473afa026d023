// Package logbuf is a buffered log writer: lines collect in memory and
// reach the underlying writer when the buffer fills, at a fixed interval,
// and on Close, so that a busy server writes its access log in a few large
// writes instead of one system call per request.
package logbuf

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// Writer is safe for concurrent use. Each Write is kept whole (a log line
// is never split between two flushes unless it is larger than the buffer).
type Writer struct {
	mu     sync.Mutex
	b      *bufio.Writer
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// Size is the buffer's size.
const Size = 64 << 10

// New returns a Writer on w that flushes every interval (and when full).
func New(w io.Writer, interval time.Duration) *Writer {
	lw := &Writer{b: bufio.NewWriterSize(w, Size), stop: make(chan struct{}), done: make(chan struct{})}
	go lw.loop(interval)
	return lw
}

func (w *Writer) loop(interval time.Duration) {
	defer close(w.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Flush()
		}
	}
}

// Write implements io.Writer. After Close it writes through.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Available() < len(p) && w.b.Buffered() > 0 {
		if err := w.b.Flush(); err != nil {
			return 0, err
		}
	}
	n, err := w.b.Write(p)
	if err == nil && w.closed {
		err = w.b.Flush()
	}
	return n, err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Flush()
}

// Close stops the periodic flushes and flushes; later writes go through at
// once.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	return w.Flush()
}
