package fleethttp

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Compression. An answer is gzipped when the client accepts gzip and the
// body is at least GzipMinBytes: history pages, snapshots of the fleet,
// the OpenAPI document and CSV reports shrink to a tenth or less, while a
// small answer would cost more to compress than it saves (see
// BenchmarkGzip and docs/performance.md, which this threshold
// is chosen from). The live stream is never compressed: each event must
// reach the client when it is written.
//
// Every answer that could have been compressed carries
// `Vary: Accept-Encoding`, so that a cache keeps the two forms apart.

// GzipMinBytes is the smallest body that is compressed.
const GzipMinBytes = 1024

// gzipLevel is the compression level: BestSpeed compresses a page of JSON
// to within a few percent of the default level at a third of its cost.
const gzipLevel = gzip.BestSpeed

// gzipPool keeps the compressors of a handler: one costs about 800 KB to
// make, so each is reused.
type gzipPool struct{ p sync.Pool }

func (gp *gzipPool) get(w http.ResponseWriter) *gzip.Writer {
	if z, ok := gp.p.Get().(*gzip.Writer); ok {
		z.Reset(w)
		return z
	}
	z, _ := gzip.NewWriterLevel(w, gzipLevel) // the level is valid
	return z
}

func (gp *gzipPool) put(z *gzip.Writer) { gp.p.Put(z) }

// acceptsGzip reports whether the request's Accept-Encoding allows gzip
// (RFC 9110 §12.5.3: listed without q=0, or * without q=0 and gzip not
// refused).
func acceptsGzip(r *http.Request) bool {
	star := false
	for _, v := range r.Header["Accept-Encoding"] {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			refused := false
			for p := range strings.SplitSeq(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					val = strings.TrimSpace(val)
					refused = val == "0" || strings.HasPrefix(val, "0.") && strings.Trim(val[2:], "0") == ""
				}
			}
			switch coding {
			case "gzip", "x-gzip":
				return !refused
			case "*":
				star = !refused
			}
		}
	}
	return star
}

// gzipWriter compresses an answer once it has seen GzipMinBytes of its
// body; until then it holds what is written, and an answer that ends
// smaller goes out as it is.
type gzipWriter struct {
	http.ResponseWriter
	pool *gzipPool
	code int // the status the handler wrote; 0 before
	buf  []byte
	z    *gzip.Writer // compressing; nil before deciding, or when plain
	// decided: the headers are out, compressed (z != nil) or plain.
	decided bool
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.decided || g.code != 0 {
		return
	}
	g.code = code
	// An answer without a body, one that must flow as written, or one
	// whose length is known to be under the threshold, is sent at once,
	// as it is: nothing is held.
	hd := g.Header()
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified ||
		knownSmall(hd) || strings.HasPrefix(hd.Get("Content-Type"), "text/event-stream") {
		g.plain()
	}
}

// knownSmall reports whether hd gives a Content-Length under GzipMinBytes.
func knownSmall(hd http.Header) bool {
	v := hd["Content-Length"]
	if len(v) != 1 {
		return false
	}
	n, err := strconv.Atoi(v[0])
	return err == nil && n >= 0 && n < GzipMinBytes
}

func (g *gzipWriter) Write(b []byte) (int, error) {
	if g.code == 0 {
		g.WriteHeader(http.StatusOK)
	}
	if g.decided {
		if g.z != nil {
			return g.z.Write(b)
		}
		return g.ResponseWriter.Write(b)
	}
	if len(g.buf)+len(b) < GzipMinBytes {
		g.buf = append(g.buf, b...)
		return len(b), nil
	}
	if err := g.compress(); err != nil {
		return 0, err
	}
	if g.z == nil { // sent plain: it was encoded already
		return g.ResponseWriter.Write(b)
	}
	return g.z.Write(b)
}

// compress sends the headers of a compressed answer and what is held.
func (g *gzipWriter) compress() error {
	hd := g.Header()
	if hd.Get("Content-Encoding") != "" {
		return g.flushPlain()
	}
	hd.Del("Content-Length")
	hd["Content-Encoding"] = gzipEncoding
	g.decided = true
	g.ResponseWriter.WriteHeader(g.code)
	g.z = g.pool.get(g.ResponseWriter)
	_, err := g.z.Write(g.buf)
	g.buf = g.buf[:0]
	return err
}

var gzipEncoding = []string{"gzip"}

// addVary adds a request header's name to Vary, as one list in one field.
func addVary(hd http.Header, name string) {
	if v := hd["Vary"]; len(v) > 0 && v[0] != "" {
		hd["Vary"] = []string{v[0] + ", " + name}
		return
	}
	hd["Vary"] = []string{name}
}

// plain sends the headers as they are, and what is held.
func (g *gzipWriter) plain() {
	g.decided = true
	if g.code == 0 {
		g.code = http.StatusOK
	}
	g.ResponseWriter.WriteHeader(g.code)
}

func (g *gzipWriter) flushPlain() error {
	g.plain()
	_, err := g.ResponseWriter.Write(g.buf)
	g.buf = g.buf[:0]
	return err
}

// finish sends what is held (the handler has returned), and ends the
// compressed stream.
func (g *gzipWriter) finish() {
	switch {
	case !g.decided && g.code == 0 && len(g.buf) == 0:
		// Nothing written: net/http answers 200 with no body itself.
	case !g.decided:
		g.flushPlain()
	case g.z != nil:
		g.z.Close()
		g.pool.put(g.z)
		g.z = nil
	}
}

// Flush sends what is held: compressed once past the threshold, else as
// it is (a flushed answer is one whose parts must arrive as written).
func (g *gzipWriter) Flush() {
	if !g.decided {
		if len(g.buf) >= GzipMinBytes {
			g.compress()
		} else {
			g.flushPlain()
		}
	}
	if g.z != nil {
		g.z.Flush()
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }
