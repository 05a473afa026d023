package fleetdevice

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"time"
)

// OsmAndName is the OsmAnd protocol's name in --devices and the API.
const OsmAndName = "osmand"

// OsmAnd returns the handler of the OsmAnd protocol (the Traccar Client
// apps and most DIY senders), for any method and path. Each request
// carries one position (DecodeOsmAnd), and is answered:
//
//   - 200 with an empty body once the position is stored (or once it was
//     deliberately not stored: a duplicate, no fix...);
//   - 400 for an unknown identifier in the query or form (404 in the JSON
//     form), also when the address sent too many unknown identifiers;
//   - 400 for a request that is not one of the protocol; 413 for a body
//     over Options.MaxOsmAndBody; 408 for a body not read within
//     Options.FrameTimeout;
//   - 429 with Retry-After when the account's points allowance refuses
//     it, 503 with Retry-After when the store cannot take it.
func (s *Server) OsmAnd() http.Handler { return http.HandlerFunc(s.serveOsmAnd) }

func (s *Server) serveOsmAnd(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// Not every ResponseWriter has deadlines (a test's recorder); the
	// http.Server's timeouts bound the request then.
	rc.SetReadDeadline(time.Now().Add(s.opts.FrameTimeout))
	pr := peer{proto: OsmAndName, remote: r.RemoteAddr, ip: hostOfString(r.RemoteAddr), brake: s.streamBrake}
	pr.slot, _ = r.Context().Value(slotKey{}).(*connSlot)
	answered := false
	answer := func(status int, retryAfter int, body []byte) {
		answered = true
		rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
		h := w.Header()
		h["Content-Type"] = []string{"text/plain; charset=utf-8"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		h["Cache-Control"] = []string{"no-store"}
		if retryAfter > 0 {
			h["Retry-After"] = []string{strconv.Itoa(retryAfter)}
		}
		w.WriteHeader(status)
		w.Write(body)
	}
	defer func() {
		if v := recover(); v != nil {
			s.logPanic(&pr, v, debug.Stack())
			if !answered {
				answer(http.StatusBadRequest, 0, []byte("not a request of the OsmAnd protocol\n"))
			}
		}
	}()

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxOsmAndBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			answer(http.StatusRequestEntityTooLarge, 0, []byte("body too large\n"))
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.stats.timeouts.Add(1)
			answer(http.StatusRequestTimeout, 0, []byte("body not received in time\n"))
		default:
			answer(http.StatusBadRequest, 0, []byte("body not read\n"))
		}
		return
	}
	m := s.getMessage()
	defer s.putMessage(m)
	sess := Session{Transport: HTTP, Now: s.opts.Now()}
	s.stats.frames.Add(1)
	isJSON, err := s.decodeOsmAnd(OsmAndRequest{
		Method:      r.Method,
		RawQuery:    r.URL.RawQuery,
		ContentType: r.Header.Get("Content-Type"),
		Body:        body,
	}, &sess, m)
	if err != nil {
		s.stats.garbage.Add(1)
		answer(http.StatusBadRequest, 0, []byte("not a request of the OsmAnd protocol\n"))
		return
	}
	switch s.handle(&pr, &sess, m) {
	case ack:
		reply := m.Reply
		if m.Kind == KindPositions && pr.verified != "" {
			if cmd := s.osmandCommand(pr.verified); cmd != nil {
				reply = cmd
			}
		}
		answer(http.StatusOK, 0, reply)
		if m.Kind == KindPositions {
			s.stats.acked.Add(1)
		}
	case refuse:
		if isJSON {
			answer(http.StatusNotFound, 0, []byte("unknown device\n"))
		} else {
			answer(http.StatusBadRequest, 0, []byte("unknown device\n"))
		}
	case silent:
		answer(http.StatusBadRequest, 0, []byte("no device identifier\n"))
	case retryLater:
		answer(http.StatusTooManyRequests, AllowanceRetryAfter, []byte("points allowance spent\n"))
	case failed:
		answer(http.StatusServiceUnavailable, UnavailableRetryAfter, []byte("not stored, retry later\n"))
	default:
		answer(http.StatusBadRequest, 0, []byte("no device identifier\n"))
	}
}

// ServeOsmAnd serves OsmAnd's HTTP on ln (the OsmAnd handler) until
// Shutdown or Close (then it returns ErrServerClosed) or until ln fails.
// Its connections count towards Options.MaxConns and MaxConnsPerAddr; a
// request's headers and body must come within Options.FrameTimeout each,
// and a connection idle for Options.IdleTimeout is closed.
func (s *Server) ServeOsmAnd(ln net.Listener) error {
	h := &http.Server{
		Handler:           s.OsmAnd(),
		ReadHeaderTimeout: s.opts.FrameTimeout,
		ReadTimeout:       2 * s.opts.FrameTimeout,
		WriteTimeout:      2*s.opts.FrameTimeout + s.opts.ReportTimeout + s.opts.WriteTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    8 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		// A request names its device: the connection's place is no longer
		// pending once one names a registered identifier (handle).
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if cc, ok := c.(*capConn); ok {
				return context.WithValue(ctx, slotKey{}, cc.slot)
			}
			return ctx
		},
	}
	if !s.register(func() { s.https[h] = struct{}{} }) {
		ln.Close()
		return ErrServerClosed
	}
	defer func() {
		s.mu.Lock()
		delete(s.https, h)
		s.mu.Unlock()
	}()
	err := h.Serve(&capListener{Listener: ln, s: s})
	if errors.Is(err, http.ErrServerClosed) {
		return ErrServerClosed
	}
	return err
}

// slotKey is the context key of a request's connection place.
type slotKey struct{}

// capListener gives each connection its place within the Server's caps
// (admit), and closes at once those it has none for.
type capListener struct {
	net.Listener
	s *Server
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc := &capConn{Conn: c, s: l.s, slot: new(connSlot)}
		if !l.s.admit(cc.slot, hostOf(c.RemoteAddr()), cc) {
			c.Close()
			continue
		}
		return cc, nil
	}
}

// capConn gives its place back when closed.
type capConn struct {
	net.Conn
	s    *Server
	slot *connSlot
}

func (c *capConn) Close() error {
	c.s.release(c.slot)
	return c.Conn.Close()
}
