package fleethttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet"
)

// statusOf maps every fleet error code to its HTTP status: the one table.
var statusOf = map[string]int{
	fleet.CodeInvalidRequest:          http.StatusBadRequest,
	fleet.CodeUnauthorized:            http.StatusUnauthorized,
	fleet.CodeInsufficientPermissions: http.StatusForbidden,
	fleet.CodeNotFound:                http.StatusNotFound,
	fleet.CodeMethodNotAllowed:        http.StatusMethodNotAllowed,
	fleet.CodeConflict:                http.StatusConflict,
	fleet.CodeInvalidStateTransition:  http.StatusConflict,
	fleet.CodePayloadTooLarge:         http.StatusRequestEntityTooLarge,
	fleet.CodeUnsupportedMediaType:    http.StatusUnsupportedMediaType,
	fleet.CodeValidation:              http.StatusUnprocessableEntity,
	fleet.CodeRateLimitExceeded:       http.StatusTooManyRequests,
	fleet.CodeInternal:                http.StatusInternalServerError,
	fleet.CodeUnavailable:             http.StatusServiceUnavailable,
}

// StatusOf returns the HTTP status of a fleet error code.
func StatusOf(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type envelope struct {
	Success    bool        `json:"success"`
	Data       any         `json:"data,omitempty"`
	Pagination *pagination `json:"pagination,omitempty"`
	Error      *errorBody  `json:"error,omitempty"`
}

type pagination struct {
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

type errorBody struct {
	Code      string             `json:"code"`
	Message   string             `json:"message"`
	RequestID string             `json:"request_id"`
	Details   []fleet.FieldError `json:"details,omitempty"`
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// writeJSON writes v with status; it is the only place bodies are encoded.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"success":false,"error":{"code":"internal_error","message":"An internal error occurred."}}`)
	}
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b) + 1)}
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

var jsonContentType = []string{"application/json"}

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
	if status >= 500 {
		log.Error("request failed", "request_id", requestID, "code", code, "err", err)
		if code == fleet.CodeInternal {
			body.Message = "An internal error occurred. Quote the request id when reporting it."
		}
	}
	writeJSON(w, status, envelope{Error: body})
}

// readBody reads a request body of at most limit bytes, checking its media
// type and encoding. An empty body reads as nil.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, fleet.Errorf(fleet.CodeUnsupportedMediaType, "Request bodies must be application/json.")
		}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fleet.Errorf(fleet.CodePayloadTooLarge, "The request body is larger than %d bytes.", limit)
		}
		return nil, fleet.Errorf(fleet.CodeInvalidRequest, "The request body could not be read.")
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	if !utf8.Valid(b) {
		return nil, fleet.Errorf(fleet.CodeInvalidRequest, "The request body is not valid UTF-8.")
	}
	return b, nil
}

// decode parses a JSON object strictly into T: unknown fields, wrong types,
// trailing data and anything but an object are invalid_request. A missing
// body is invalid_request too, unless optional (then it reads as {}).
func decode[T any](body []byte, optional bool) (T, error) {
	var v T
	if body == nil {
		if optional {
			return v, nil
		}
		return v, fleet.Errorf(fleet.CodeInvalidRequest, "A JSON object request body is required.")
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return v, fleet.Errorf(fleet.CodeInvalidRequest, "The request body must be a JSON object.")
	}
	// encoding/json matches field names without regard to case; the API's
	// are exact ("NAME" is an unknown field), so the keys are checked first.
	var raw any
	rd := json.NewDecoder(bytes.NewReader(body))
	rd.UseNumber() // ranges are the typed decoder's to judge
	if err := rd.Decode(&raw); err != nil {
		return v, decodeError(err)
	}
	if err := exactKeys(raw, reflect.TypeFor[T](), ""); err != nil {
		return v, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, fleet.Errorf(fleet.CodeInvalidRequest, "The request body has data after the JSON object.")
	}
	return v, nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// exactKeys checks that every key of the objects in v names a field of the
// struct type t decodes it into, spelled exactly as its json tag, down
// through nested structs and slices. Types that decode themselves are
// theirs to check.
func exactKeys(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil // a wrong type: the decoder names it
		}
		fields := jsonFields(t)
		for k, x := range m {
			ft, ok := fields[k]
			if !ok {
				e := fleet.Errorf(fleet.CodeInvalidRequest, "Unknown or read-only field %q.", path+k)
				e.Details = []fleet.FieldError{{Field: path + k, Message: "is not a field that can be set"}}
				return e
			}
			if err := exactKeys(x, ft, path+k+"."); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, x := range a {
			if err := exactKeys(x, t.Elem(), strings.TrimSuffix(path, ".")+"["+strconv.Itoa(i)+"]."); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of a struct's fields, embedded ones
// included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
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
