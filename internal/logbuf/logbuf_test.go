package logbuf

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// syncBuf counts the writes that reach it.
type syncBuf struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *syncBuf) state() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String(), s.writes
}

func TestLinesArriveWholeInFewWrites(t *testing.T) {
	is := is.New(t)
	var dst syncBuf
	w := New(&dst, time.Hour)
	line := strings.Repeat("x", 99) + "\n"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				w.Write([]byte(line))
			}
		})
	}
	wg.Wait()
	is.NoErr(w.Close())
	out, writes := dst.state()
	is.Equal(len(out), 8000*len(line))
	for l := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
		is.Equal(len(l), 99) // never split nor interleaved
	}
	is.True(writes <= 8000*len(line)/(Size-len(line))+1) // full buffers only, and the last
}

func TestFlushesOnItsInterval(t *testing.T) {
	is := is.New(t)
	var dst syncBuf
	w := New(&dst, 5*time.Millisecond)
	defer w.Close()
	w.Write([]byte("hello\n"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if out, _ := dst.state(); out == "hello\n" {
			break
		}
		is.True(time.Now().Before(deadline)) // flushed without Close
		time.Sleep(time.Millisecond)
	}
}

func TestWritesGoThroughAfterClose(t *testing.T) {
	is := is.New(t)
	var dst syncBuf
	w := New(&dst, time.Hour)
	is.NoErr(w.Close())
	w.Write([]byte("late\n"))
	out, _ := dst.state()
	is.Equal(out, "late\n")
}
