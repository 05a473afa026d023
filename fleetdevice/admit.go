package fleetdevice

import (
	"container/list"
	"net"
	"time"
)

// Connections and the caps (API.md §13). A connection holds a place
// within Options.MaxConns and MaxConnsPerAddr from its accept to its
// close. Until it names a registered identifier (it has logged in), it is
// pending: it must log in within Options.LoginTimeout of its opening or is
// closed, and pending connections together hold at most three quarters of
// MaxConns (so that at least a quarter is always for devices that have
// logged in). When a new connection finds a cap full (or the pending share),
// the oldest pending connection (of its address, for the address's cap)
// is closed to make room for it; only when every connection within the
// cap has logged in is the new one refused. So connections that never
// send a byte, from however many addresses, cannot keep a device from
// logging in: they make way for it, and live LoginTimeout at most.

// pendingShareNum / pendingShareDen is the part of Options.MaxConns that
// pending connections may hold together.
const (
	pendingShareNum = 3
	pendingShareDen = 4
)

// connSlot is one connection's place within the caps.
type connSlot struct {
	ip   string
	conn net.Conn // closed to evict it, or at its login deadline
	// all and addr are its elements in Server.pending and
	// Server.pendingAddr[ip] while it is pending; nil once it logged in
	// or gave its place back.
	all, addr *list.Element
	timer     *time.Timer // its login deadline, while pending
	held      bool        // it is counted in open and perAddr
}

// maxPending is how many pending connections the Server keeps.
func (s *Server) maxPending() int {
	return max(1, s.opts.MaxConns*pendingShareNum/pendingShareDen)
}

// admit gives slot, the place of a new connection c from ip, within the
// caps, closing the oldest pending connection where a cap is full; it
// reports false when there is no place (every connection within a full
// cap has logged in) or the server is closing, and the caller closes c.
func (s *Server) admit(slot *connSlot, ip string, c net.Conn) bool {
	var evicted []*connSlot
	defer func() {
		for _, e := range evicted {
			s.stats.evicted.Add(1)
			s.log.Debug("device connection not logged in closed to make room", "remote", e.conn.RemoteAddr().String())
			e.conn.Close()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	addrPending := s.pendingAddr[ip]
	needAddr := s.perAddr[ip] >= s.opts.MaxConnsPerAddr
	open, pending := s.open, s.pending.Len()
	if needAddr {
		open, pending = open-1, pending-1
	}
	needAll := open >= s.opts.MaxConns || pending >= s.maxPending()
	if s.closing.Load() || needAddr && addrPending == nil || needAll && pending == 0 {
		s.stats.refused.Add(1)
		return false
	}
	if needAddr {
		evicted = append(evicted, s.dropLocked(addrPending.Front().Value.(*connSlot)))
	}
	if needAll {
		evicted = append(evicted, s.dropLocked(s.pending.Front().Value.(*connSlot)))
	}
	slot.ip, slot.conn, slot.held = ip, c, true
	s.open++
	s.perAddr[ip]++
	slot.all = s.pending.PushBack(slot)
	if s.pendingAddr[ip] == nil {
		s.pendingAddr[ip] = list.New()
	}
	slot.addr = s.pendingAddr[ip].PushBack(slot)
	slot.timer = time.AfterFunc(s.opts.LoginTimeout, func() { s.loginExpired(slot) })
	return true
}

// dropLocked takes slot out of the pending lists and gives back its place
// (once), under s.mu; it returns slot.
func (s *Server) dropLocked(slot *connSlot) *connSlot {
	s.unpendLocked(slot)
	if slot.held {
		slot.held = false
		s.open--
		if n := s.perAddr[slot.ip] - 1; n > 0 {
			s.perAddr[slot.ip] = n
		} else {
			delete(s.perAddr, slot.ip)
		}
	}
	return slot
}

// unpendLocked takes slot out of the pending lists, under s.mu.
func (s *Server) unpendLocked(slot *connSlot) {
	if slot.all == nil {
		return
	}
	slot.timer.Stop()
	s.pending.Remove(slot.all)
	l := s.pendingAddr[slot.ip]
	l.Remove(slot.addr)
	if l.Len() == 0 {
		delete(s.pendingAddr, slot.ip)
	}
	slot.all, slot.addr = nil, nil
}

// loggedIn notes that slot's connection named a registered identifier: it
// is pending no more.
func (s *Server) loggedIn(slot *connSlot) {
	if slot == nil {
		return
	}
	s.mu.Lock()
	s.unpendLocked(slot)
	s.mu.Unlock()
}

// loginExpired closes slot's connection if it is still pending.
func (s *Server) loginExpired(slot *connSlot) {
	s.mu.Lock()
	pending := slot.all != nil
	if pending {
		s.dropLocked(slot)
	}
	s.mu.Unlock()
	if pending {
		s.stats.timeouts.Add(1)
		s.log.Debug("device connection closed: no registered identifier in time", "remote", slot.conn.RemoteAddr().String())
		slot.conn.Close()
	}
}

// release gives back slot's place (once).
func (s *Server) release(slot *connSlot) {
	s.mu.Lock()
	s.dropLocked(slot)
	s.mu.Unlock()
}
