package fleethttp

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConnections is fleetserver's default cap on open connections.
const DefaultMaxConnections = 10_000

// LimitConnections returns a listener that keeps at most max connections
// accepted from ln open at once, so that a flood of connections cannot run
// the process out of file descriptors. A connection over the cap is
// answered at once with 503 unavailable (the JSON error envelope,
// Retry-After: 1, Connection: close, the request id and Fleet-Version, as
// any answer) and closed, without reaching the handler. It is meant for a
// plain-HTTP listener that an http.Server serves; a connection counts from
// its Accept to its Close. A max of 0 or less returns ln as it is: no cap.
// Its answers name the module's version (ModuleVersion); Handler's
// LimitConnections names the handler's (WithVersion).
func LimitConnections(ln net.Listener, max int) net.Listener {
	return limitConnections(ln, max, headerSafe(ModuleVersion()))
}

// LimitConnections is the package's LimitConnections for a listener that
// serves h: its answers over the cap name h's version, as h's do.
func (h *Handler) LimitConnections(ln net.Listener, max int) net.Listener {
	return limitConnections(ln, max, h.versionHdr[0])
}

func limitConnections(ln net.Listener, max int, version string) net.Listener {
	if max <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, max: int64(max), refusing: make(chan struct{}, maxRefusing), version: version}
}

// maxRefusing bounds the connections being answered 503 at once; beyond
// it, a connection over the cap is closed without an answer.
const maxRefusing = 64

// refuseWithin bounds the time spent answering a connection over the cap.
const refuseWithin = time.Second

type limitListener struct {
	net.Listener
	max      int64
	open     atomic.Int64
	refusing chan struct{}
	version  string // Fleet-Version of the refusals
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &limitedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				refuse(c, l.version)
			}()
		default:
			c.Close()
		}
	}
}

// limitedConn gives its place back when closed (once, however often it
// is closed).
type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// refuse answers a connection over the cap with 503 and closes it. The
// request is not read: once the answer is written, the sending side is
// closed and what the client sent is drained until it closes (so that the
// client reads the answer rather than a reset), for refuseWithin at most.
func refuse(c net.Conn, version string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(refuseWithin))
	var id [8]byte
	rand.Read(id[:])
	rid := "req_" + hex.EncodeToString(id[:])
	body := `{"success":false,"error":{"code":"unavailable","message":"The server has too many open connections; retry after 1 second.","request_id":"` + rid + `"}}` + "\n"
	io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\n"+
		"Content-Type: application/json\r\n"+
		"Content-Length: "+strconv.Itoa(len(body))+"\r\n"+
		"Retry-After: 1\r\n"+
		"X-Request-Id: "+rid+"\r\n"+
		VersionHeader+": "+version+"\r\n"+
		"X-Content-Type-Options: nosniff\r\n"+
		"Cache-Control: no-store\r\n"+
		"Connection: close\r\n\r\n"+body)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}
}
