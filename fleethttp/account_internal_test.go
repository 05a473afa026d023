package fleethttp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetwire"
	"github.com/matryer/is"
)

// The account answer written field by field is the envelope's bytes as
// encoding/json writes them, for every plain name; a name that is not
// plain is not written by it.
func TestAccountAnswerBytes(t *testing.T) {
	is := is.New(t)
	for _, name := range []string{"Bench", "", "ACME Haulage & Sons <Ltd>", "a/b 100% {ok}", "'single'"} {
		for _, at := range []time.Time{
			time.Date(2026, 11, 28, 12, 33, 31, 868077000, time.UTC),
			time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			time.Date(2026, 1, 2, 3, 4, 5, 100, time.FixedZone("", 3600)),
		} {
			a := fleetwire.Account{AccountID: "acc_06h249bwvhs0bdtsy9exnb3734", CompanyName: name, Plan: "enterprise", APIVersion: "v1", RateLimitPerHour: 100_000_000, CreatedAt: at}
			is.True(plainJSONText(name))
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			is.NoErr(enc.Encode(envelope{Success: true, Data: a}))
			got := append(accountAnswer(a).appendJSON(nil), '\n')
			is.Equal(string(got), want.String())
		}
	}
	for _, name := range []string{`say "hi"`, `back\slash`, "tab\there", "Zürich Fleet", "bell\x07", "del\x7f"} {
		is.True(!plainJSONText(name)) // written by encoding/json instead
	}
}
