package fleetwire

import (
	"net/http"
	"slices"

	"github.com/fleetkit/fleetapi/fleet"
)

// Envelope is every JSON answer of the API: Success with Data (and, for a
// list, Pagination), or the Error. The handler encodes Envelope[any]; a
// client decodes Envelope[json.RawMessage] and then Data into the type the
// operation answers.
type Envelope[T any] struct {
	Success    bool        `json:"success"`
	Data       T           `json:"data,omitempty"`
	Pagination *Pagination `json:"pagination,omitempty"`
	Error      *ErrorBody  `json:"error,omitempty"`
}

// Pagination is the page of a list answer: NextCursor, passed as cursor,
// asks for the next page; it is null on the last page.
type Pagination struct {
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

// ErrorBody is the error of a failed answer: Code is one of fleet's error
// codes (the contract), Message is for people, RequestID is the one to
// quote, and Details names each bad field.
type ErrorBody struct {
	Code      string             `json:"code"`
	Message   string             `json:"message"`
	RequestID string             `json:"request_id"`
	Details   []fleet.FieldError `json:"details,omitempty"`
}

// statusOf maps every fleet error code the API answers to its HTTP
// status: the one table, which the handler answers by, the OpenAPI document
// describes and a client reads back. Nothing writes to it.
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

// StatusOf returns the HTTP status of a fleet error code; an unknown code
// has internal_error's, 500.
func StatusOf(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorCodes lists every error code the API answers, sorted.
func ErrorCodes() []string {
	codes := make([]string, 0, len(statusOf))
	for code := range statusOf {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}
