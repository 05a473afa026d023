package fleet

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Error codes. Each is the `error.code` string of the HTTP API; fleethttp maps
// them to statuses in one table.
const (
	CodeInvalidRequest          = "invalid_request"
	CodeUnauthorized            = "unauthorized"
	CodeInsufficientPermissions = "insufficient_permissions"
	CodeNotFound                = "not_found"
	CodeMethodNotAllowed        = "method_not_allowed"
	CodeConflict                = "conflict"
	CodeInvalidStateTransition  = "invalid_state_transition"
	CodePayloadTooLarge         = "payload_too_large"
	CodeUnsupportedMediaType    = "unsupported_media_type"
	CodeValidation              = "validation_error"
	CodeRateLimitExceeded       = "rate_limit_exceeded"
	CodeInternal                = "internal_error"
	CodeUnavailable             = "unavailable"
)

// FieldError names one bad field of a request, e.g. "locations[3].latitude".
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the error type of the domain. Its Code is one of the Code*
// constants; Message is meant for people and never carries internals.
type Error struct {
	Code    string
	Message string
	Details []FieldError
	// Err is the cause, when the error stands for another (a store's
	// fault, a driver's error): it is in Error's text and in the chain
	// (errors.Is, errors.As), for logs, and never reaches a client.
	Err error
	// RetryAfter, when positive, is how long the caller should wait before
	// trying again (a refusal for an allowance that a window's end
	// restores); fleethttp sends it as Retry-After, in whole seconds
	// rounded up, and its Client sets it from that header.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code + ": " + e.Message)
	for _, d := range e.Details {
		b.WriteString("; " + d.Field + ": " + d.Message)
	}
	if e.Err != nil {
		b.WriteString(" (" + e.Err.Error() + ")")
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: the Code of the *Error in its chain, ""
// for nil, and CodeInternal for anything else.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the message of the *Error in err's chain, or a generic
// message for errors that are not *Error (so internals never reach a client).
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "An internal error occurred."
}

// NotFound returns the not_found error for a resource kind and id.
func NotFound(kind, id string) *Error {
	return Errorf(CodeNotFound, "No %s with id %q.", kind, id)
}

// Validator collects field errors; Err returns a validation_error naming
// every bad field, or nil.
type Validator struct {
	prefix  string
	details []FieldError
}

// Prefix sets what is written before every field name (e.g. "locations[3].").
func (v *Validator) Prefix(p string) { v.prefix = p }

// Add records a bad field.
func (v *Validator) Add(field, format string, args ...any) {
	v.details = append(v.details, FieldError{Field: v.prefix + field, Message: fmt.Sprintf(format, args...)})
}

// Check records a bad field when ok is false.
func (v *Validator) Check(ok bool, field, format string, args ...any) {
	if !ok {
		v.Add(field, format, args...)
	}
}

// Len is the number of bad fields so far.
func (v *Validator) Len() int { return len(v.details) }

// Err returns nil when nothing was recorded, else a validation_error.
func (v *Validator) Err() error {
	if len(v.details) == 0 {
		return nil
	}
	msg := "The request has an invalid field."
	if len(v.details) > 1 {
		msg = fmt.Sprintf("The request has %d invalid fields.", len(v.details))
	}
	return &Error{Code: CodeValidation, Message: msg, Details: v.details}
}
