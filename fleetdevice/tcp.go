package fleetdevice

import (
	"errors"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// smallBuf is the read buffer every connection holds: a login, a
// heartbeat or a text sentence fits. A longer frame is read into a pooled
// buffer that goes back once the frame is handled, so that an idle
// connection holds no more than this.
const smallBuf = 512

// Read buffers longer than smallBuf come from the Server's pools, by
// size: minPooled, 4 times that, 16 times that; a larger one is allocated.
const (
	minPooled = 4 << 10
	pools     = 3
)

// ServeTCP accepts device connections on ln, each speaking p, until
// Shutdown or Close (then it returns ErrServerClosed) or until ln fails.
// It closes ln when it returns.
//
// Each connection is read frame by frame (p.Split, within p.MaxFrame
// bytes): a login is answered once Ingest knows the identifier (else
// Reject, and the connection is closed), positions once Ingest has stored
// them, heartbeats at once. Bytes that are no frame of p close the
// connection; a frame whose checksum fails is ignored. A report the
// points allowance or the store refused is not answered, and the
// connection is closed: the device keeps the records and resends them
// once it has reconnected, rather than at once into the same refusal.
func (s *Server) ServeTCP(ln net.Listener, p Decoder) error {
	if !s.register(func() { s.listeners[ln] = struct{}{} }) {
		ln.Close()
		return ErrServerClosed
	}
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: wait a little and
			// try again, as net/http does.
			if !s.pause(&delay, "device listener accept failed", p, err) {
				return ErrServerClosed
			}
			continue
		}
		delay = 0
		s.serveConn(c, p)
	}
}

// pause waits before trying again after a failed accept or read, twice
// as long as the last time in a row (delay), and reports false if the
// Server is closed meanwhile.
func (s *Server) pause(delay *time.Duration, msg string, p Decoder, err error) bool {
	*delay = min(max(2**delay, 5*time.Millisecond), time.Second)
	s.log.Warn(msg, "protocol", p.Name(), "error", err, "retry_in", *delay)
	t := time.NewTimer(*delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.base.Done():
		return false
	}
}

// serveConn admits c and serves it in a goroutine of its own.
func (s *Server) serveConn(c net.Conn, p Decoder) {
	ip := hostOf(c.RemoteAddr())
	slot := new(connSlot)
	if !s.admit(slot, ip, c) {
		c.Close()
		return
	}
	tc := &tcpConn{s: s, c: c, p: p, max: p.MaxFrame()}
	tc.pr = peer{proto: p.Name(), remote: c.RemoteAddr().String(), ip: ip, brake: s.streamBrake, slot: slot}
	tc.sess.Transport = TCP
	if tc.max <= 0 {
		tc.max = smallBuf
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		s.release(slot)
		c.Close()
		return
	}
	s.conns[tc] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go tc.serve()
}

// tcpConn is one device connection.
type tcpConn struct {
	s    *Server
	c    net.Conn
	p    Decoder
	max  int // p.MaxFrame()
	pr   peer
	sess Session

	// The bytes read and not yet handled are buf()[off:n].
	off, n int
	big    []byte // a pooled buffer while a frame longer than small is read
	small  [smallBuf]byte
	// frameStart is when the first byte of the frame being read came.
	frameStart time.Time
	// linger: a refusal was written; the connection is closed gently so
	// that the device reads it rather than a reset.
	linger bool
	// garbage: the connection is closed for bytes of no frame.
	garbage bool
	// wmu orders the writes of the reading goroutine (answers) and of the
	// commands' (commands.go).
	wmu sync.Mutex
	// turn is held while a frame is handled, from its decoding to its
	// acknowledgement, and by a command's write: a command the frame's
	// report lets go (an engine stop waiting for the vehicle to slow) is
	// written after that report's acknowledgement, which the device
	// waits for, never before it.
	turn sync.Mutex
	// cmds delivers the device's commands once it has logged in (nil
	// before, or when there are none to deliver).
	cmds *connCommands
}

func (c *tcpConn) buf() []byte {
	if c.big != nil {
		return c.big
	}
	return c.small[:]
}

func (c *tcpConn) serve() {
	s := c.s
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(&c.pr, v, debug.Stack())
		}
		if c.cmds != nil {
			// Wakes a command being written, then waits for the delivery
			// to end.
			c.c.SetWriteDeadline(time.Now())
			c.cmds.end(c.garbage)
		}
		if c.linger {
			lingerClose(c.c)
		}
		c.putBig()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		// The place is free before the device sees the close.
		s.release(c.pr.slot)
		c.c.Close()
		s.wg.Done()
	}()
	for {
		now := time.Now()
		if c.n == c.off {
			c.c.SetReadDeadline(now.Add(s.opts.IdleTimeout))
		} else {
			c.c.SetReadDeadline(c.frameStart.Add(s.opts.FrameTimeout))
		}
		// After the deadline is set: Shutdown sets closing before it
		// wakes the connections, so one of the two is seen.
		if s.closing.Load() {
			return
		}
		if !c.room() {
			c.garbage = true
			s.stats.garbage.Add(1)
			s.log.Debug("device frame too long", "protocol", c.pr.proto, "remote", c.pr.remote, "bytes", c.n-c.off)
			return
		}
		b := c.buf()
		k, err := c.c.Read(b[c.n:min(len(b), c.off+c.max)])
		if k > 0 {
			if c.n == c.off {
				c.frameStart = time.Now()
			}
			c.n += k
			if !c.frames() {
				return
			}
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && !s.closing.Load() {
				s.stats.timeouts.Add(1)
				if c.n == c.off {
					s.log.Debug("idle device connection closed", "protocol", c.pr.proto, "remote", c.pr.remote)
				} else {
					s.log.Debug("device frame not completed in time", "protocol", c.pr.proto, "remote", c.pr.remote)
				}
			}
			return
		}
	}
}

// room makes room to read more of the frame being read, and reports
// false when the frame has reached p.MaxFrame without being whole.
func (c *tcpConn) room() bool {
	pending := c.n - c.off
	if pending >= c.max {
		return false
	}
	b := c.buf()
	if c.n < len(b) {
		return true
	}
	if c.off > 0 { // move the frame begun to the front
		copy(b, b[c.off:c.n])
		c.off, c.n = 0, pending
		return true
	}
	// The buffer is full of one frame begun: a larger one.
	nb := c.s.getBuf(min(2*len(b), c.max))
	copy(nb, b[:c.n])
	c.putBig()
	c.big = nb
	return true
}

// frames handles the whole frames read, and reports false when the
// connection is to be closed.
func (c *tcpConn) frames() bool {
	s := c.s
	handled := false
	for c.off < c.n {
		b := c.buf()[c.off:c.n]
		k, err := c.p.Split(b)
		if err != nil || k < 0 || k > len(b) {
			c.garbage = true
			s.stats.garbage.Add(1)
			s.log.Debug("device sent bytes of no frame", "protocol", c.pr.proto, "remote", c.pr.remote)
			return false
		}
		if k == 0 {
			break // the frame's end has not come yet
		}
		if !c.frame(b[:k]) {
			return false
		}
		c.off += k
		handled = true
	}
	if c.off == c.n {
		c.off, c.n = 0, 0
		c.putBig()
		return true
	}
	if handled {
		// The next frame has begun.
		c.frameStart = time.Now()
		if pending := c.n - c.off; c.big != nil && pending <= smallBuf {
			copy(c.small[:], c.big[c.off:c.n])
			c.off, c.n = 0, pending
			c.putBig()
		}
	}
	return true
}

// frame decodes and handles one frame, and reports false when the
// connection is to be closed.
func (c *tcpConn) frame(f []byte) bool {
	c.turn.Lock()
	defer c.turn.Unlock()
	s := c.s
	m := s.getMessage()
	defer s.putMessage(m)
	c.sess.Now = s.opts.Now()
	s.stats.frames.Add(1)
	if err := c.p.Decode(f, &c.sess, m); err != nil {
		if errors.Is(err, ErrChecksum) {
			s.stats.checksum.Add(1)
			s.log.Debug("device frame checksum failed", "protocol", c.pr.proto, "remote", c.pr.remote)
			return true
		}
		c.garbage = true
		s.stats.garbage.Add(1)
		s.log.Debug("device frame not decoded", "protocol", c.pr.proto, "remote", c.pr.remote, "error", err)
		return false
	}
	if m.HasResult && c.cmds != nil {
		c.cmds.answer(m)
	}
	switch s.handle(&c.pr, &c.sess, m) {
	case ack:
		if len(m.Reply) > 0 {
			if !c.write(m.Reply) {
				return false
			}
			if m.Kind == KindPositions {
				s.stats.acked.Add(1)
			}
		}
		if m.Close {
			return false
		}
		// The device's commands follow its login's answer; a report may
		// let a held one go.
		if c.pr.verified != "" {
			if c.cmds == nil {
				c.startCommands(c.pr.verified)
			} else if m.Kind == KindPositions {
				c.cmds.reported()
			}
		}
		return true
	case silent:
		return true
	case refuse:
		if len(m.Reject) > 0 && c.write(m.Reject) {
			c.linger = true
		}
		return false
	}
	return false
}

// write writes b within the write deadline.
func (c *tcpConn) write(b []byte) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
	if _, err := c.c.Write(b); err != nil {
		c.s.log.Debug("device acknowledgement not written", "protocol", c.pr.proto, "remote", c.pr.remote, "error", err)
		return false
	}
	return true
}

// lingerClose closes the sending side of c and reads what the device
// still sends, for a second and 4 KiB at most, so that what was written
// reaches it before the connection is closed.
func lingerClose(c net.Conn) {
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(time.Second))
	var b [512]byte
	for n := 0; n < 4<<10; {
		k, err := c.Read(b[:])
		n += k
		if err != nil {
			return
		}
	}
}

func (c *tcpConn) putBig() {
	if c.big != nil {
		c.s.putBuf(c.big)
		c.big = nil
	}
}

// getBuf returns a read buffer of at least n bytes.
func (s *Server) getBuf(n int) []byte {
	size := minPooled
	for i := range s.bufs {
		if n <= size {
			if b, ok := s.bufs[i].Get().(*[]byte); ok {
				return *b
			}
			return make([]byte, size)
		}
		size *= 4
	}
	return make([]byte, n)
}

// putBuf gives back a buffer of getBuf.
func (s *Server) putBuf(b []byte) {
	size := minPooled
	for i := range s.bufs {
		if cap(b) == size {
			b = b[:size]
			s.bufs[i].Put(&b)
			return
		}
		size *= 4
	}
}
