package fleethttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// StatusOf returns the HTTP status of a fleet error code, from the one
// table (fleetwire.StatusOf).
func StatusOf(code string) int { return fleetwire.StatusOf(code) }

// The envelope of every answer, its pagination and its error are the wire
// types both sides of the API share.
type (
	envelope   = fleetwire.Envelope[any]
	pagination = fleetwire.Pagination
	errorBody  = fleetwire.ErrorBody
)

func jsonMarshal(v any) ([]byte, error) { return marshalNoEscape(v) }

// writeJSON writes v with status; it is the only place bodies are encoded.
// JSON goes out without HTML escaping ("<API_KEY>", not "\u003cAPI_KEY\u003e"):
// it is served as application/json with nosniff, never inside a page.
// jsonAppender is a body that writes its own JSON, as encoding/json would
// write it (a page of history: thousands of points).
type jsonAppender interface{ appendJSON([]byte) []byte }

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONTagged(w, nil, status, v)
}

// writeJSONTagged is writeJSON for a resource a client may hold a copy of:
// a 200 carries an ETag (a digest of the body), and when r's
// If-None-Match names it the answer is 304 Not Modified without a body.
// With r nil it is writeJSON.
func writeJSONTagged(w http.ResponseWriter, r *http.Request, status int, v any) {
	buf := jsonBufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledJSON { // a huge page's buffer is not kept
			jsonBufs.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if a, ok := v.(jsonAppender); ok {
		buf.Write(a.appendJSON(buf.AvailableBuffer()))
		buf.WriteByte('\n')
	} else if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"success":false,"error":{"code":"internal_error","message":"An internal error occurred."}}` + "\n")
	}
	h := w.Header()
	if r != nil && status == http.StatusOK {
		tag := representationTag(r, entityTag(buf.Bytes()), buf.Len())
		h["Etag"] = []string{tag}
		if notModified(r, tag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// entityTag is the strong ETag of a body: a digest of its bytes, so that
// every server answers the same tag for the same representation.
func entityTag(body []byte) string {
	sum := sha256.Sum256(body)
	var tag [2 + 24]byte // 18 bytes are 24 in base64, between quotes
	tag[0], tag[len(tag)-1] = '"', '"'
	base64.RawURLEncoding.Encode(tag[1:len(tag)-1], sum[:18])
	return string(tag[:])
}

// representationTag is the ETag of the representation r is answered with:
// tag for the body as it is, and another for its gzipped form (tag with
// "-gzip" inside the quotes), since RFC 9110 §8.8.3 asks a strong
// validator to change with the content coding. Each is honoured in
// If-None-Match for the representation it names.
func representationTag(r *http.Request, tag string, size int) string {
	if st, ok := r.Context().Value(ctxKey{}).(*state); ok && st.gzipping && size >= GzipMinBytes {
		return strings.TrimSuffix(tag, `"`) + `-gzip"`
	}
	return tag
}

// notModified reports whether r's If-None-Match names tag (RFC 9110
// §13.1.2: weak comparison, or "*").
func notModified(r *http.Request, tag string) bool {
	for _, v := range r.Header["If-None-Match"] {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == tag || t == "*" {
				return true
			}
		}
	}
	return false
}

// jsonBufs keeps the buffers answers are encoded in, up to maxPooledJSON
// bytes each: an answer costs no buffer growth once the pool is warm.
var jsonBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledJSON = 64 << 10

var jsonContentType = []string{"application/json"}

// UnavailableRetryAfter is the Retry-After, in seconds, of every 503
// unavailable answer.
const UnavailableRetryAfter = 1

var unavailableRetryAfter = []string{strconv.Itoa(UnavailableRetryAfter)}

// writeError writes err as the error envelope. Internal errors are logged
// with the request id; their text never reaches the client.
func writeError(w http.ResponseWriter, log *slog.Logger, requestID string, err error) {
	code := fleet.ErrorCode(err)
	status := StatusOf(code)
	body := &errorBody{Code: code, Message: fleet.ErrorMessage(err), RequestID: requestID}
	var fe *fleet.Error
	if errors.As(err, &fe) {
		body.Details = fe.Details
	}
	if fe != nil && fe.RetryAfter > 0 {
		w.Header()["Retry-After"] = []string{strconv.FormatInt(int64((fe.RetryAfter+time.Second-1)/time.Second), 10)}
	}
	if status == http.StatusServiceUnavailable {
		// The store is unreachable, full or timed out, or the server is
		// stopping: a fault that heals by itself, so the client is told
		// to come back.
		w.Header()["Retry-After"] = unavailableRetryAfter
	}
	switch {
	case status >= 500 && errors.Is(err, context.Canceled):
		// The request's context ended before the store answered: its
		// client went away (or the server is closing its connection).
		// No fault of the server's, and no one reads the answer.
		log.Info("request canceled before its answer", "request_id", requestID, "code", code, "err", err)
	case status >= 500:
		log.Error("request failed", "request_id", requestID, "code", code, "err", err)
	}
	if status >= 500 {
		if code == fleet.CodeInternal {
			body.Message = "An internal error occurred. Quote the request id when reporting it."
		}
	}
	writeJSON(w, status, envelope{Error: body})
}

// readBody reads a request body of at most limit bytes, checking its media
// type and encoding. An empty body reads as nil. The body must arrive within
// timeout (a read deadline on the connection); when it does not, the answer
// is invalid_request and, as the body is left unread, the connection closes
// after it.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !acceptedMediaType(r.Method, mt) {
			if r.Method == http.MethodPatch {
				return nil, fleet.Errorf(fleet.CodeUnsupportedMediaType, "PATCH bodies must be application/merge-patch+json or application/json.")
			}
			return nil, fleet.Errorf(fleet.CodeUnsupportedMediaType, "Request bodies must be application/json.")
		}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	rc := http.NewResponseController(w)
	// Writers that are not a connection's (tests' recorders) have no
	// deadline to set.
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fleet.Errorf(fleet.CodePayloadTooLarge, "The request body is larger than %d bytes.", limit)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fleet.Errorf(fleet.CodeInvalidRequest, "The request body did not arrive within %s.", seconds(timeout))
		}
		return nil, fleet.Errorf(fleet.CodeInvalidRequest, "The request body could not be read.")
	}
	if deadline {
		// The rest of the request may take its time; the server sets the
		// connection's deadlines again for its next request.
		rc.SetReadDeadline(time.Time{})
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	if !utf8.Valid(b) {
		return nil, fleet.Errorf(fleet.CodeInvalidRequest, "The request body is not valid UTF-8.")
	}
	return b, nil
}

// Media types of request bodies. A PATCH is a JSON merge patch (RFC 7396)
// and may say so; application/json means the same there.
const (
	mediaJSON       = "application/json"
	mediaMergePatch = "application/merge-patch+json"
)

func acceptedMediaType(method, mt string) bool {
	return mt == mediaJSON || (method == http.MethodPatch && mt == mediaMergePatch)
}

// seconds writes a duration for people: "30 seconds", "1 second", or as
// Go writes it when it is not whole seconds ("250ms").
func seconds(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + " seconds"
	}
	return d.String()
}

// decode parses a JSON object strictly into T, in one pass (decodeStrict):
// unknown fields, wrong types, a member given twice in any object, trailing
// data and anything but an object are invalid_request. A missing body is
// invalid_request too, unless optional (then it reads as {}).
func decode[T any](body []byte, optional bool) (T, error) {
	var v T
	err := decodeValue(body, optional, reflect.ValueOf(&v).Elem())
	return v, err
}

// decodeValue is decode into v, a settable value of the body's type.
func decodeValue(body []byte, optional bool, v reflect.Value) error {
	if body == nil {
		if optional {
			return nil
		}
		return fleet.Errorf(fleet.CodeInvalidRequest, "A JSON object request body is required.")
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return fleet.Errorf(fleet.CodeInvalidRequest, "The request body must be a JSON object.")
	}
	return decodeStrict(body, v, planOf(v.Type()))
}

// wrongType is the error of a value of the wrong JSON type, naming it.
func wrongType(path, want string) error {
	if path == "" {
		return fleet.Errorf(fleet.CodeInvalidRequest, "The request body must be %s.", want)
	}
	e := fleet.Errorf(fleet.CodeInvalidRequest, "Field %q must be %s.", path, want)
	e.Details = []fleet.FieldError{{Field: path, Message: "must be " + want}}
	return e
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fleet.Errorf(fleet.CodeInvalidRequest, "The request body is not valid JSON (at byte %d).", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		e := fleet.Errorf(fleet.CodeInvalidRequest, "Field %q must be %s.", field, jsonKind(typ.Type.String()))
		e.Details = []fleet.FieldError{{Field: field, Message: "must be " + jsonKind(typ.Type.String())}}
		return e
	case errors.As(err, new(*time.ParseError)):
		return fleet.Errorf(fleet.CodeInvalidRequest, "A timestamp is not in RFC 3339 form (2026-11-22T10:15:30Z).")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fleet.Errorf(fleet.CodeInvalidRequest, "The request body is not valid JSON (it ends too early).")
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name := strings.Trim(f, `"`)
		e := fleet.Errorf(fleet.CodeInvalidRequest, "Unknown or read-only field %s.", f)
		e.Details = []fleet.FieldError{{Field: name, Message: "is not a field that can be set"}}
		return e
	}
	var fe *fleet.Error
	if errors.As(err, &fe) {
		return fe
	}
	return fleet.Errorf(fleet.CodeInvalidRequest, "The request body is not valid JSON.")
}

func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "map["):
		return "an object"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.Contains(goType, "string"):
		return "a string"
	case strings.Contains(goType, "int"), strings.Contains(goType, "float"):
		return "a number"
	case strings.Contains(goType, "bool"):
		return "a boolean"
	case strings.Contains(goType, "Time"):
		return "an RFC 3339 timestamp"
	}
	return fmt.Sprintf("of type %s", goType)
}

// checkQueryText refuses a control character in any query parameter,
// naming the parameter: no filter has a use for one, and filters reach the
// store.
func checkQueryText(q url.Values) error {
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names) // the same parameter is named every time
	for _, name := range names {
		if err := fleet.CheckQueryText(name, q[name]...); err != nil {
			return err
		}
	}
	return nil
}
