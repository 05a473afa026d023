package fleetdevice

import (
	"container/list"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Ingest is what the listeners need of the domain: fleet.Service's device
// edge (svc.DeviceEdge()) has these methods.
type Ingest interface {
	// Known reports whether identifier is registered; an unknown one is
	// recorded for the operator.
	Known(ctx context.Context, identifier, protocol, remoteAddr string) (bool, error)
	// Report ingests one decoded message and returns once its points are
	// committed. Its error's fleet.ErrorCode is not_found for an unknown
	// identifier, rate_limit_exceeded when the account's points allowance
	// (or the device's) refuses the report, unavailable or internal_error
	// for store trouble.
	Report(ctx context.Context, rep fleet.DeviceReport) (fleet.DeviceResult, error)
}

// Registry is what an Ingest may also have (fleet's device edge has it):
// whether an identifier is registered, recording nothing when it is not.
// The listeners ask it, rather than Known, for the identifiers of an
// address past its unknown-identifier brake, so that a registered device
// is served whatever others sent from its address, while the unknown
// identifiers of a braked address are neither recorded nor logged. An
// Ingest without it is asked Known.
type Registry interface {
	Registered(ctx context.Context, identifier string) (bool, error)
}

// Defaults of Options.
const (
	DefaultIdleTimeout     = 10 * time.Minute
	DefaultFrameTimeout    = 30 * time.Second
	DefaultLoginTimeout    = 30 * time.Second
	DefaultWriteTimeout    = 10 * time.Second
	DefaultReportTimeout   = 30 * time.Second
	DefaultMaxConns        = 10_000
	DefaultMaxConnsPerAddr = 256
	DefaultUnknownBurst    = 5
	DefaultUnknownEvery    = time.Minute
	DefaultMaxBrakedAddrs  = 10_000
	DefaultMaxUDPInFlight  = 256
	DefaultMaxOsmAndBody   = 64 << 10
)

// AllowanceRetryAfter is the Retry-After, in seconds, of OsmAnd's 429 when
// the account's points allowance refuses a report.
const AllowanceRetryAfter = 60

// UnavailableRetryAfter is the Retry-After, in seconds, of OsmAnd's 503
// when the store cannot take a report.
const UnavailableRetryAfter = 5

// Options tune a Server. A zero value takes its default.
type Options struct {
	// IdleTimeout closes a connection that has sent nothing for this long
	// (DefaultIdleTimeout, 10 minutes).
	IdleTimeout time.Duration
	// FrameTimeout bounds the time from a frame's first byte to its last
	// (and an OsmAnd request's body): a frame begun must be complete
	// within it, however slowly its bytes come (DefaultFrameTimeout).
	FrameTimeout time.Duration
	// LoginTimeout closes a connection (TCP, or OsmAnd's HTTP) that has
	// not named a registered identifier within it of its opening
	// (DefaultLoginTimeout, 30 seconds).
	LoginTimeout time.Duration
	// WriteTimeout bounds the write of an acknowledgement
	// (DefaultWriteTimeout).
	WriteTimeout time.Duration
	// ReportTimeout bounds a call of Ingest (DefaultReportTimeout); a
	// report that runs out of it is not acknowledged.
	ReportTimeout time.Duration
	// MaxConns bounds the open connections of every listener of the
	// Server together; MaxConnsPerAddr those of one remote IP address.
	// Connections that have not logged in (named a registered identifier)
	// hold at most three quarters of MaxConns together. A new connection
	// that finds either cap (or that share) full takes the place of the
	// oldest connection that has not logged in (of its address, for
	// MaxConnsPerAddr), which is closed; when every connection within the
	// cap has logged in, the new one is closed at once.
	MaxConns        int
	MaxConnsPerAddr int
	// UnknownBurst unknown identifiers from one IP address are recorded
	// (Ingest.Known); after them, until the address has earned another
	// attempt (one every UnknownEvery), its identifiers are only checked
	// (Registry.Registered): a registered one is served, an unknown one is
	// refused without being recorded or logged. Datagrams and connections
	// are braked apart: a datagram's source address can be forged, so
	// datagrams never brake an address's connections.
	UnknownBurst int
	UnknownEvery time.Duration
	// MaxBrakedAddrs bounds the addresses whose unknown identifiers are
	// remembered: when full, those whose
	// attempts have come back are forgotten, else one at random.
	MaxBrakedAddrs int
	// MaxUDPInFlight bounds the datagrams being handled at once on each
	// UDP listener; beyond it a datagram is dropped (the device resends).
	MaxUDPInFlight int
	// MaxOsmAndBody bounds an OsmAnd request's body in bytes (64 KiB).
	MaxOsmAndBody int64
	// Now is the clock handed to decoders (Session.Now) and used by the
	// unknown-identifier brake; time.Now when nil.
	Now func() time.Time
	// Logger receives the listeners' log lines; slog.Default when nil.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.IdleTimeout, DefaultIdleTimeout)
	def(&o.FrameTimeout, DefaultFrameTimeout)
	def(&o.LoginTimeout, DefaultLoginTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.ReportTimeout, DefaultReportTimeout)
	def(&o.UnknownEvery, DefaultUnknownEvery)
	defInt(&o.MaxConns, DefaultMaxConns)
	defInt(&o.MaxConnsPerAddr, DefaultMaxConnsPerAddr)
	defInt(&o.UnknownBurst, DefaultUnknownBurst)
	defInt(&o.MaxBrakedAddrs, DefaultMaxBrakedAddrs)
	defInt(&o.MaxUDPInFlight, DefaultMaxUDPInFlight)
	if o.MaxOsmAndBody <= 0 {
		o.MaxOsmAndBody = DefaultMaxOsmAndBody
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// ErrServerClosed is returned by the Serve methods once Shutdown or Close
// was called.
var ErrServerClosed = errors.New("fleetdevice: server closed")

// Server serves devices on any number of listeners (TCP, UDP, OsmAnd's
// HTTP), each of one protocol, and hands what they report to an Ingest.
// A device is acknowledged only once Ingest has stored what it sent.
type Server struct {
	ing  Ingest
	opts Options
	log  *slog.Logger

	// base is the parent of every Ingest call's context; Close cancels it.
	base   context.Context
	cancel context.CancelFunc

	// brakes are the unknown-identifier brakes of connections (TCP and
	// OsmAnd's HTTP) and of datagrams, apart.
	streamBrake, datagramBrake *brake
	msgs                       sync.Pool        // *Message
	bufs                       [pools]sync.Pool // *[]byte, read buffers (tcp.go)

	// decodeOsmAnd is DecodeOsmAnd (a test replaces it).
	decodeOsmAnd func(OsmAndRequest, *Session, *Message) (bool, error)

	closing atomic.Bool
	wg      sync.WaitGroup // connections, UDP listeners

	mu      sync.Mutex
	open    int
	perAddr map[string]int
	// pending holds the connections not yet logged in, oldest first
	// (*connSlot); pendingAddr those of each address (admit.go).
	pending     *list.List
	pendingAddr map[string]*list.List
	conns       map[*tcpConn]struct{}
	listeners   map[net.Listener]struct{}
	packets     map[net.PacketConn]struct{}
	https       map[*http.Server]struct{}

	stats counters
}

// NewServer returns a Server that reports to ing.
func NewServer(ing Ingest, opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{
		ing:           ing,
		opts:          opts,
		log:           opts.Logger,
		streamBrake:   newBrake(opts.UnknownBurst, opts.UnknownEvery, opts.MaxBrakedAddrs),
		datagramBrake: newBrake(opts.UnknownBurst, opts.UnknownEvery, opts.MaxBrakedAddrs),
		decodeOsmAnd:  DecodeOsmAnd,
		perAddr:       map[string]int{},
		pending:       list.New(),
		pendingAddr:   map[string]*list.List{},
		conns:         map[*tcpConn]struct{}{},
		listeners:     map[net.Listener]struct{}{},
		packets:       map[net.PacketConn]struct{}{},
		https:         map[*http.Server]struct{}{},
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.msgs.New = func() any { return new(Message) }
	return s
}

// Stats are the Server's counters since it was built.
type Stats struct {
	// Open is the number of connections open now (TCP and OsmAnd's HTTP).
	Open int
	// Refused counts connections closed at once over MaxConns or
	// MaxConnsPerAddr; Evicted connections not yet logged in closed to
	// make room for a new one; Dropped datagrams over MaxUDPInFlight.
	Refused, Evicted, Dropped int64
	// Frames counts frames and datagrams decoded; Acked the
	// acknowledgements written after a report was stored.
	Frames, Acked int64
	// Unknown counts identifiers Ingest did not know; Braked the unknown
	// identifiers refused while their address was braked (only checked,
	// neither recorded nor logged).
	Unknown, Braked int64
	// Garbage counts connections closed (datagrams dropped) for bytes
	// that are no frame of their protocol; Checksum frames whose checksum
	// failed.
	Garbage, Checksum int64
	// Limited counts reports the points allowance refused; Failed those
	// the store could not take (or that ran out of ReportTimeout).
	Limited, Failed int64
	// Timeouts counts connections closed for their idle, frame or login
	// deadline; Panics the frames whose handling panicked.
	Timeouts, Panics int64
	// CommandsSent counts commands written to devices (or put in an
	// OsmAnd answer), CommandsAnswered the devices' answers recorded,
	// CommandsFailed the commands failed (their protocol could not carry
	// them, or the device answered garbage).
	CommandsSent, CommandsAnswered, CommandsFailed int64
}

type counters struct {
	refused, evicted, dropped, frames, acked, unknown, braked, garbage, checksum,
	limited, failed, timeouts, panics atomic.Int64
	commandsSent, commandsAnswered, commandsFailed atomic.Int64
}

// Stats returns the Server's counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	open := s.open
	s.mu.Unlock()
	c := &s.stats
	return Stats{
		Open: open, Refused: c.refused.Load(), Evicted: c.evicted.Load(), Dropped: c.dropped.Load(),
		Frames: c.frames.Load(), Acked: c.acked.Load(),
		Unknown: c.unknown.Load(), Braked: c.braked.Load(),
		Garbage: c.garbage.Load(), Checksum: c.checksum.Load(),
		Limited: c.limited.Load(), Failed: c.failed.Load(),
		Timeouts: c.timeouts.Load(), Panics: c.panics.Load(),
		CommandsSent: c.commandsSent.Load(), CommandsAnswered: c.commandsAnswered.Load(), CommandsFailed: c.commandsFailed.Load(),
	}
}

// register runs add under the Server's lock unless the Server is closing,
// and reports whether it ran.
func (s *Server) register(add func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	add()
	return true
}

// Shutdown stops the Server gracefully: its listeners stop accepting,
// idle connections are closed, and a connection whose report is being
// stored gets its acknowledgement before it is closed. It returns once
// every connection is closed and every Serve has returned, or ctx's error
// when ctx ends first (Close then ends what is left).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	for ln := range s.listeners {
		ln.Close()
	}
	now := time.Now()
	for c := range s.conns {
		// Wakes a connection waiting for bytes; one handling a frame
		// sees closing before it reads again.
		c.c.SetReadDeadline(now)
	}
	for pc := range s.packets {
		pc.SetReadDeadline(now)
	}
	var hs []*http.Server
	for h := range s.https {
		hs = append(hs, h)
	}
	s.mu.Unlock()

	errc := make(chan error, len(hs))
	for _, h := range hs {
		go func() { errc <- h.Shutdown(ctx) }()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	for range hs {
		if e := <-errc; e != nil && err == nil {
			err = e
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return err
}

// Close stops the Server at once: its listeners and connections are
// closed, and reports being stored are cancelled (not acknowledged).
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing.Store(true)
	var closers []interface{ Close() error }
	for ln := range s.listeners {
		closers = append(closers, ln)
	}
	for c := range s.conns {
		closers = append(closers, c.c)
	}
	for pc := range s.packets {
		closers = append(closers, pc)
	}
	for h := range s.https {
		closers = append(closers, h)
	}
	s.mu.Unlock()
	// Outside the lock: a connection's Close gives its place back.
	for _, c := range closers {
		c.Close()
	}
	s.cancel()
	return nil
}

// getMessage returns an empty Message from the pool; putMessage gives it
// back. A connection holds one only while it handles a frame, so that an
// idle connection holds none.
func (s *Server) getMessage() *Message {
	m := s.msgs.Get().(*Message)
	m.Reset()
	return m
}

func (s *Server) putMessage(m *Message) {
	if cap(m.Positions) > 4096 || cap(m.Reply) > 64<<10 {
		return // an outsized one goes to the collector
	}
	s.msgs.Put(m)
}

// hostOf is the address a remote address counts as for the
// per-address caps and the unknown-identifier brake: its IP address, or
// for IPv6 its /64 network (what one subscriber usually holds).
func hostOf(a net.Addr) string {
	switch a := a.(type) {
	case *net.TCPAddr:
		return addrKey(a.IP)
	case *net.UDPAddr:
		return addrKey(a.IP)
	case nil:
		return ""
	}
	return hostOfString(a.String())
}

// hostOfString is hostOf of a host:port.
func hostOfString(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		h = addr
	}
	if ip := net.ParseIP(h); ip != nil {
		return addrKey(ip)
	}
	return h
}

func addrKey(ip net.IP) string {
	if ip.To4() == nil && len(ip) == net.IPv6len {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}
