package fleethttp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestWriteErrorLogsACanceledRequestAsInfo: a store call cut short because
// the request's context was canceled (its client went away) is answered
// 503 like any unavailable store, but logged at info, not as a failure; a
// store that timed out is still an error.
func TestWriteErrorLogsACanceledRequestAsInfo(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		cause error
		level string
		msg   string
	}{
		{context.Canceled, "level=INFO", "request canceled before its answer"},
		{context.DeadlineExceeded, "level=ERROR", "request failed"},
	} {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		w := httptest.NewRecorder()
		err := &fleet.Error{Code: fleet.CodeUnavailable, Message: "The store is unavailable; retry later.",
			Err: fmt.Errorf("sqlstore: wait for the writer: %w", c.cause)}
		writeError(w, log, "req_1", err)
		is.Equal(w.Code, http.StatusServiceUnavailable)
		is.True(strings.Contains(logs.String(), c.level))
		is.True(strings.Contains(logs.String(), c.msg))
	}
}
