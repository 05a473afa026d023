package fleetwire_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
	"github.com/matryer/is"
)

// What the handler encodes as Envelope[any] a client decodes as
// Envelope[json.RawMessage], data, page and error alike; an error
// envelope carries no data or pagination member.
func TestEnvelopeBothSides(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	next := "c_2"
	sent, err := json.Marshal(fleetwire.Envelope[any]{Success: true, Data: []fleetwire.APIKey{{KeyID: "key_1", Permissions: []string{"*"}, CreatedAt: at}},
		Pagination: &fleetwire.Pagination{NextCursor: &next, HasMore: true}})
	is.NoErr(err)
	var got fleetwire.Envelope[json.RawMessage]
	is.NoErr(json.Unmarshal(sent, &got))
	is.True(got.Success && got.Error == nil)
	is.Equal(*got.Pagination.NextCursor, "c_2")
	var keys []fleetwire.APIKey
	is.NoErr(json.Unmarshal(got.Data, &keys))
	is.Equal(keys[0].KeyID, "key_1")
	is.True(keys[0].CreatedAt.Equal(at))

	sent, err = json.Marshal(fleetwire.Envelope[any]{Error: &fleetwire.ErrorBody{Code: fleet.CodeValidation, Message: "bad", RequestID: "req_1",
		Details: []fleet.FieldError{{Field: "name", Message: "is required"}}}})
	is.NoErr(err)
	is.Equal(string(sent), `{"success":false,"error":{"code":"validation_error","message":"bad","request_id":"req_1","details":[{"field":"name","message":"is required"}]}}`)
	got = fleetwire.Envelope[json.RawMessage]{}
	is.NoErr(json.Unmarshal(sent, &got))
	is.Equal(got.Error.Details[0].Field, "name")
	is.Equal(got.Data, nil)
}

// The error table: every code it lists has a 4xx or 5xx status, a code it
// does not know is 500, and the list is sorted.
func TestErrorTable(t *testing.T) {
	is := is.New(t)
	codes := fleetwire.ErrorCodes()
	is.True(slices.IsSorted(codes))
	is.True(slices.Contains(codes, fleet.CodeValidation) && slices.Contains(codes, fleet.CodeUnavailable))
	for _, c := range codes {
		s := fleetwire.StatusOf(c)
		is.True(s >= 400 && s <= 599) // c
		is.True(s != http.StatusInternalServerError || c == fleet.CodeInternal)
	}
	is.Equal(fleetwire.StatusOf(fleet.CodeInvalidStateTransition), http.StatusConflict)
	is.Equal(fleetwire.StatusOf("no_such_code"), http.StatusInternalServerError)
}

// JSONObject keeps an object or null as it came and refuses any other
// value; empty, it encodes as null.
func TestJSONObject(t *testing.T) {
	is := is.New(t)
	var in fleetwire.AlertInput
	is.NoErr(json.Unmarshal([]byte(`{"message":"m","data":{"axle": 1}}`), &in))
	is.Equal(string(in.Data), `{"axle": 1}`)
	is.NoErr(json.Unmarshal([]byte(`{"message":"m","data":null}`), &in))
	for _, bad := range []string{`[1]`, `"x"`, `1`, `true`} {
		err := json.Unmarshal([]byte(`{"message":"m","data":`+bad+`}`), &in)
		var te *json.UnmarshalTypeError
		is.True(errors.As(err, &te)) // bad
	}
	out, err := json.Marshal(fleetwire.AlertInput{Message: "m"})
	is.NoErr(err)
	is.Equal(string(out), `{"vehicle_id":null,"severity":null,"message":"m","data":null}`)
}
