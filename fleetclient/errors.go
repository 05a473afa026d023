package fleetclient

import (
	"fmt"
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// APIError is an error the API answered: the *fleet.Error it carried
// (code, message, field details) in Err, with the HTTP status and the
// request id to quote when reporting it. fleet.ErrorCode reads its code, and
// errors.As finds the *fleet.Error, so code that handles errors reads the
// same on both sides of the wire:
//
//	if fleet.ErrorCode(err) == fleet.CodeValidation { ... }
//	var apiErr *fleetclient.APIError
//	if errors.As(err, &apiErr) { log.Print(apiErr.StatusCode, apiErr.RequestID) }
type APIError struct {
	StatusCode int
	RequestID  string
	Err        *fleet.Error
}

func (e *APIError) Error() string {
	if e.RequestID == "" {
		return fmt.Sprintf("fleet: %d %s: %s", e.StatusCode, e.Err.Code, e.Err.Message)
	}
	return fmt.Sprintf("fleet: %d %s: %s (request %s)", e.StatusCode, e.Err.Code, e.Err.Message, e.RequestID)
}

// Unwrap returns the *fleet.Error, for errors.As and fleet.ErrorCode.
func (e *APIError) Unwrap() error { return e.Err }

// TransportError is a request that got no answer from the API: the
// connection failed or broke, or the context ended. Err is the cause
// (errors.Is works through it: context.DeadlineExceeded, syscall.ECONNREFUSED...).
// fleet.ErrorCode reads it as unavailable, never as the server's internal_error.
type TransportError struct {
	Method, URL string
	Err         error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("fleet: %s %s: %v", e.Method, e.URL, e.Err)
}

// Unwrap returns the cause, and an unavailable *fleet.Error for
// fleet.ErrorCode: a new one each time, so that a caller who changes it
// changes no other answer.
func (e *TransportError) Unwrap() []error {
	return []error{e.Err, &fleet.Error{Code: fleet.CodeUnavailable, Message: "The API did not answer."}}
}

// codeOfStatus is the error code of an answer that carries none (a proxy's
// error page, say): the code the error table maps to that status, or
// internal_error.
func codeOfStatus(status int) string {
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fleet.CodeUnavailable
	}
	for _, code := range fleetwire.ErrorCodes() {
		if fleetwire.StatusOf(code) == status && code != fleet.CodeInvalidStateTransition {
			return code
		}
	}
	return fleet.CodeInternal
}
