package fleethttp

import (
	"testing"

	"github.com/matryer/is"
)

func TestRedactQuery(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{
		"limit=5":                         "limit=5",
		"token=fst_abc":                   "token=REDACTED",
		"vehicle_id=v1&token=fst_abc":     "vehicle_id=v1&token=REDACTED",
		"token=a&token=b&last_event_id=9": "token=REDACTED&token=REDACTED&last_event_id=9",
		"%74oken=fst_abc":                 "token=REDACTED", // however the name is spelt
		"tok%65n=fst_abc&x=1":             "token=REDACTED&x=1",
		"token":                           "token=REDACTED",
		"mytoken=1&token_type=2":          "mytoken=1&token_type=2",
		"q=token%3Dfst_abc":               "q=REDACTED",                    // a value holding a token
		"q=token%3Dx":                     "q=token%3Dx",                   // a value that mentions the name is no token
		"Token=fst_abc&TOKEN=x":           "Token=REDACTED&TOKEN=REDACTED", // whatever the case
		"tok=fst_abc&vehicle_id=v1":       "tok=REDACTED&vehicle_id=v1",    // a token under another name
		"key=fleet_abc&last_event_id=12":  "key=REDACTED&last_event_id=12", // a key secret in a query
	} {
		is.Equal(redactQuery(in), want) // redacted
	}
}
