package fleethttp

import (
	"io"
	"net/http"
	"time"
)

// LimitBodyTime returns a handler that keeps a request's body from holding
// its connection: a body must arrive within timeout of the handler's start
// (a read deadline on the connection), and an answer given without reading
// the whole body says Connection: close, and the connection is closed as
// soon as the handler returns. Without it, net/http reads what is left of
// an unread body before it reuses the connection, with no deadline, so a
// client that announces a body and sends none holds the connection for as
// long as it likes, whatever the answer was (a 401, a 404, a dashboard
// form).
//
// Requests without a body are passed on untouched (a live stream's
// connection has no deadline it could hit), and so are HTTP/2 requests,
// whose unread bodies do not hold a connection. A handler may set its own
// read deadline while it reads (http.ResponseController), as the API's
// routes do; once the body has been read to its end, the deadline is
// lifted, so a handler that runs longer is not cut off. A timeout of 0 or
// less is DefaultBodyTimeout.
//
// Handler applies it to the API itself, with its body timeout
// (WithBodyTimeouts); wrap the other handlers of a server with it (a
// dashboard, a metrics listener, a program's own routes).
func LimitBodyTime(next http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := guardBody(w, r, timeout)
		if g != nil {
			r = r.WithContext(r.Context()) // a copy, whose Body may change
			r.Body = g
			defer g.done()
		}
		next.ServeHTTP(w, r)
	})
}

var connectionClose = []string{"close"}

// guardedBody is a request body whose connection has a read deadline
// until the body has been read to its end.
type guardedBody struct {
	io.ReadCloser
	rc  *http.ResponseController
	hd  http.Header
	eof bool
}

// guardBody arms the body deadline of r, a request to be answered on w,
// and returns the body to give the handler in place of r.Body; nil when
// there is nothing to guard: no body, HTTP/2, a writer that is not a
// connection's (a test's recorder), or a body guarded further out.
func guardBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) *guardedBody {
	if r.Body == nil || r.Body == http.NoBody || r.ProtoMajor != 1 {
		return nil
	}
	if _, ok := r.Body.(*guardedBody); ok {
		return nil
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(timeout)) != nil {
		return nil
	}
	hd := w.Header()
	// Until the body has been read, an answer closes the connection:
	// net/http would otherwise read the rest of the body before writing
	// the answer, to reuse the connection.
	hd["Connection"] = connectionClose
	return &guardedBody{ReadCloser: r.Body, rc: rc, hd: hd}
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.eof {
		b.eof = true
		if c := b.hd["Connection"]; len(c) == 1 && &c[0] == &connectionClose[0] {
			delete(b.hd, "Connection") // the connection may serve the next request
		}
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// done is called when the handler has returned: a body not read to its end
// is given up at once (the deadline moved to now), so that the connection
// closes after the answer rather than when the deadline comes.
func (b *guardedBody) done() {
	if !b.eof {
		b.rc.SetReadDeadline(time.Now())
	}
}
