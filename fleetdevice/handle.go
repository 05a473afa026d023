package fleetdevice

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"golang.org/x/time/rate"
)

// peer is what the listener knows of the other end, beside the Session a
// decoder sees.
type peer struct {
	proto  string // protocol name
	remote string // host:port
	ip     string
	// brake is the unknown-identifier brake of the peer's transport:
	// connections' or datagrams'.
	brake *brake
	// slot is the connection's place within the caps (nil for a datagram,
	// or a request the Server did not accept itself): it is pending until
	// the connection names a registered identifier.
	slot *connSlot
	// verified is the identifier Ingest knew on this connection: frames
	// of it are not checked again.
	verified string
}

// outcome is what the listener does after a message.
type outcome uint8

const (
	// ack: write Reply (the message is stored, or needs no storing).
	ack outcome = iota
	// silent: write nothing, keep the connection (a heartbeat or other
	// message before any registered identifier was named: an unknown
	// device gets no answer to anything).
	silent
	// refuse: the identifier is not registered: write Reject and close.
	refuse
	// retryLater: the points allowance refused the report: no reply,
	// close; the device resends once it has reconnected.
	retryLater
	// failed: the store could not take the report in time: no reply,
	// close.
	failed
	// invalid: a message that cannot be attributed to a device (positions
	// before any login): close.
	invalid
)

// handle decides what to do with a decoded message, calling Ingest where
// the message needs it. It reports ack only once what the message carries
// is stored, and only for a message of a registered identifier: one a
// connection logged in with, or one the message names, which Ingest
// knows.
func (s *Server) handle(pr *peer, sess *Session, m *Message) outcome {
	switch m.Kind {
	case KindLogin:
		id := m.Identifier
		if id == "" {
			id = sess.Identifier
		}
		if id == "" {
			return invalid
		}
		o := s.verify(pr, id)
		if o == ack {
			sess.Identifier = id
		}
		return o
	case KindPositions:
		id := m.Identifier
		if id == "" {
			id = pr.verified
		}
		if id == "" {
			return invalid
		}
		if len(m.Positions) == 0 {
			// Nothing to store: the device is answered once it is known.
			return s.verify(pr, id)
		}
		if id != pr.verified && pr.brake.braked(pr.ip, s.opts.Now()) {
			// Only a registered identifier goes on to be reported.
			if o := s.check(pr, id); o != ack {
				return o
			}
		}
		ctx, cancel := context.WithTimeout(s.base, s.opts.ReportTimeout)
		_, err := s.ing.Report(ctx, s.report(pr, id, m))
		cancel()
		switch code := fleet.ErrorCode(err); code {
		case "":
			s.verified(pr, id)
			return ack
		case fleet.CodeNotFound:
			s.unknown(pr, id)
			return refuse
		case fleet.CodeRateLimitExceeded:
			s.stats.limited.Add(1)
			s.log.Debug("device report over the points allowance", "protocol", pr.proto, "identifier", id, "remote", pr.remote)
			return retryLater
		default:
			s.stats.failed.Add(1)
			s.log.Warn("device report not stored", "protocol", pr.proto, "identifier", id, "remote", pr.remote, "code", code, "error", err)
			return failed
		}
	}
	// Heartbeats and other messages are answered at once, once their
	// device is known to be registered: the one they name, else the
	// connection's.
	id := m.Identifier
	if id == "" {
		id = pr.verified
	}
	if id == "" {
		return silent
	}
	return s.verify(pr, id)
}

// verify answers ack for the identifier the connection already verified,
// else asks Ingest whether id is registered: Known, which records an
// unknown one, or, while pr's address is braked, only whether it is
// (check).
func (s *Server) verify(pr *peer, id string) outcome {
	if id == pr.verified {
		return ack
	}
	if pr.brake.braked(pr.ip, s.opts.Now()) {
		o := s.check(pr, id)
		if o == ack {
			s.verified(pr, id)
		}
		return o
	}
	ctx, cancel := context.WithTimeout(s.base, s.opts.ReportTimeout)
	known, err := s.ing.Known(ctx, id, pr.proto, pr.remote)
	cancel()
	if err != nil {
		s.notChecked(pr, id, err)
		return failed
	}
	if !known {
		s.unknown(pr, id)
		return refuse
	}
	s.verified(pr, id)
	return ack
}

// check answers ack when id is registered and refuse when it is not, for
// an address past its brake: it asks Ingest's Registry (Known when it has
// none) and records, logs and brakes nothing, so that a registered device
// is served whatever others sent from its address.
func (s *Server) check(pr *peer, id string) outcome {
	ctx, cancel := context.WithTimeout(s.base, s.opts.ReportTimeout)
	defer cancel()
	var known bool
	var err error
	if reg, ok := s.ing.(Registry); ok {
		known, err = reg.Registered(ctx, id)
	} else {
		known, err = s.ing.Known(ctx, id, pr.proto, pr.remote)
	}
	switch {
	case err != nil:
		s.notChecked(pr, id, err)
		return failed
	case !known:
		s.stats.braked.Add(1)
		return refuse
	}
	return ack
}

// verified notes that the peer's connection named id, a registered
// identifier: it has logged in.
func (s *Server) verified(pr *peer, id string) {
	if pr.verified == "" {
		s.loggedIn(pr.slot)
	}
	pr.verified = id
}

func (s *Server) notChecked(pr *peer, id string, err error) {
	s.stats.failed.Add(1)
	s.log.Warn("device login not checked", "protocol", pr.proto, "identifier", id, "remote", pr.remote, "code", fleet.ErrorCode(err), "error", err)
}

func (s *Server) unknown(pr *peer, id string) {
	s.stats.unknown.Add(1)
	pr.brake.unknown(pr.ip, s.opts.Now())
	s.log.Info("unknown device refused", "protocol", pr.proto, "identifier", id, "remote", pr.remote)
}

// report is the fleet.DeviceReport of m's positions, in m's order, each
// with its attributes (one allocation for all of them: a name is the
// decoder's constant, or a Teltonika element's from ioNames).
func (s *Server) report(pr *peer, id string, m *Message) fleet.DeviceReport {
	n := len(m.Positions)
	ps := make([]fleet.DevicePosition, n)
	// One backing array for the optional values, so that a position
	// costs no allocation of its own.
	vals := make([]float64, 0, 3*n)
	sats := make([]int, 0, n)
	opt := func(has bool, v float64) *float64 {
		if !has {
			return nil
		}
		vals = append(vals, v)
		return &vals[len(vals)-1]
	}
	total := 0
	for i := range m.Positions {
		total += len(m.Positions[i].Attrs)
	}
	attrs := make(fleet.Attributes, 0, total)
	for i := range m.Positions {
		p := &m.Positions[i]
		d := &ps[i]
		d.Latitude = p.Latitude
		d.Longitude = p.Longitude
		d.Timestamp = p.Time.UTC()
		d.Speed = opt(p.HasSpeed, p.Speed)
		d.Heading = opt(p.HasHeading, p.Heading)
		d.Altitude = opt(p.HasAltitude, p.Altitude)
		d.Valid = p.Valid
		if p.HasSatellites {
			sats = append(sats, p.Satellites)
			d.Satellites = &sats[len(sats)-1]
		}
		start := len(attrs)
		for _, a := range p.Attrs {
			attrs = append(attrs, attribute(a))
		}
		if len(attrs) > start {
			d.Attrs = attrs[start:len(attrs):len(attrs)]
		}
	}
	return fleet.DeviceReport{Identifier: id, Protocol: pr.proto, RemoteAddr: pr.remote, Positions: ps}
}

// attribute is a decoder's attribute as fleet keeps it.
func attribute(a devproto.Attribute) fleet.Attribute {
	x := fleet.Attribute{Name: a.Key, Num: a.Num}
	if x.Name == "" {
		x.Name = ioName(a.IO)
	}
	switch a.Kind {
	case devproto.AttrBool:
		x.Kind = fleet.AttrBool
	case devproto.AttrString:
		x.Kind, x.Text = fleet.AttrText, a.Str
	}
	return x
}

// ioNames are the names of Teltonika's I/O elements 0 to 511, made once, so
// that naming one allocates nothing; ioName makes the rarer others.
var ioNames = func() (names [512]string) {
	for i := range names {
		names[i] = "io" + strconv.Itoa(i)
	}
	return names
}()

func ioName(n int) string {
	if n >= 0 && n < len(ioNames) {
		return ioNames[n]
	}
	return "io" + strconv.Itoa(n)
}

// brake refuses, for a while, the addresses that sent too many unknown
// identifiers: each address has a token bucket of burst tokens refilled
// one every every, and an unknown identifier takes one. An address
// without a token is refused without asking Ingest. At most max
// addresses are remembered; when full, those whose bucket has refilled
// are forgotten, and failing any, one at random.
type brake struct {
	mu    sync.Mutex
	m     map[string]*rate.Limiter
	every rate.Limit
	burst int
	max   int
}

func newBrake(burst int, every time.Duration, max int) *brake {
	return &brake{m: map[string]*rate.Limiter{}, every: rate.Every(every), burst: burst, max: max}
}

// braked reports whether ip has no unknown attempt left at now.
func (b *brake) braked(ip string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.m[ip]
	return l != nil && l.TokensAt(now) < 1
}

// unknown takes one attempt from ip at now.
func (b *brake) unknown(ip string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.m[ip]
	if l == nil {
		if len(b.m) >= b.max {
			b.forget(now)
		}
		l = rate.NewLimiter(b.every, b.burst)
		b.m[ip] = l
	}
	l.AllowN(now, 1)
}

// forget drops the addresses whose bucket is full again, or one address
// when none is.
func (b *brake) forget(now time.Time) {
	for ip, l := range b.m {
		if l.TokensAt(now) >= float64(b.burst) {
			delete(b.m, ip)
		}
	}
	if len(b.m) < b.max {
		return
	}
	for ip := range b.m {
		delete(b.m, ip)
		return
	}
}

// size is the number of addresses remembered.
func (b *brake) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// logPanic records a panic while handling a frame.
func (s *Server) logPanic(pr *peer, v any, stack []byte) {
	s.stats.panics.Add(1)
	s.log.Error("device frame handling panicked", "protocol", pr.proto, "remote", pr.remote, "panic", v, slog.String("stack", string(stack)))
}
