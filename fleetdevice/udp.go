package fleetdevice

import (
	"errors"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// maxDatagram is the largest UDP payload.
const maxDatagram = 65535

// ServeUDP reads device datagrams on pc, each one message of p, until
// Shutdown or Close (then it returns ErrServerClosed) or until pc fails.
// It closes pc when it returns.
//
// A datagram is handled as a TCP frame is, each on its own (a datagram
// names its device), and the reply goes to its sender. A datagram that is
// no message of p, or whose checksum fails, is dropped; an unknown
// identifier is answered with the protocol's Reject. At most
// Options.MaxUDPInFlight datagrams are handled at once; beyond it one is
// dropped (the device resends what is not acknowledged).
func (s *Server) ServeUDP(pc net.PacketConn, p Decoder) error {
	if !s.register(func() {
		s.packets[pc] = struct{}{}
		s.wg.Add(1)
	}) {
		pc.Close()
		return ErrServerClosed
	}

	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait() // their replies go out before pc is closed
		s.mu.Lock()
		delete(s.packets, pc)
		s.mu.Unlock()
		pc.Close()
		s.wg.Done()
	}()
	size := min(max(p.MaxFrame(), 1), maxDatagram)
	buf := make([]byte, size+1) // one more: a longer datagram is seen as one
	sem := make(chan struct{}, s.opts.MaxUDPInFlight)
	var delay time.Duration
	for {
		if s.closing.Load() {
			return ErrServerClosed
		}
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			if !s.pause(&delay, "device datagram read failed", p, err) {
				return ErrServerClosed
			}
			continue
		}
		delay = 0
		if n == 0 {
			continue
		}
		if n > size {
			s.stats.garbage.Add(1)
			continue
		}
		select {
		case sem <- struct{}{}:
		default:
			s.stats.dropped.Add(1)
			continue
		}
		d := make([]byte, n)
		copy(d, buf[:n])
		inflight.Add(1)
		go func() {
			defer func() {
				<-sem
				inflight.Done()
			}()
			s.datagram(pc, addr, p, d)
		}()
	}
}

// datagram decodes and handles one datagram, replying to its sender.
func (s *Server) datagram(pc net.PacketConn, addr net.Addr, p Decoder, d []byte) {
	pr := peer{proto: p.Name(), remote: addr.String(), ip: hostOf(addr), brake: s.datagramBrake}
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(&pr, v, debug.Stack())
		}
	}()
	m := s.getMessage()
	defer s.putMessage(m)
	sess := Session{Transport: UDP, Now: s.opts.Now()}
	s.stats.frames.Add(1)
	if err := p.Decode(d, &sess, m); err != nil {
		if errors.Is(err, ErrChecksum) {
			s.stats.checksum.Add(1)
		} else {
			s.stats.garbage.Add(1)
		}
		s.log.Debug("device datagram not decoded", "protocol", pr.proto, "remote", pr.remote, "error", err)
		return
	}
	var reply []byte
	o := s.handle(&pr, &sess, m)
	switch o {
	case ack:
		reply = m.Reply
	case refuse:
		reply = m.Reject
	}
	if len(reply) == 0 {
		return
	}
	// A datagram does not wait for its peer; the deadline only bounds a
	// full socket buffer.
	pc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	if _, err := pc.WriteTo(reply, addr); err != nil {
		s.log.Debug("device acknowledgement not sent", "protocol", pr.proto, "remote", pr.remote, "error", err)
		return
	}
	if o == ack && m.Kind == KindPositions {
		s.stats.acked.Add(1)
	}
}
