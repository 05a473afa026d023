package fleetclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// LiveLocation is one report from the live stream.
type LiveLocation struct {
	ID string // the event id a reconnect resumes after
	fleet.LocationRecord
}

// Stream follows live location reports (of the given vehicles, or all)
// until ctx ends or the caller stops. A dropped connection is reopened with
// Last-Event-ID, so reports sent meanwhile (up to ten minutes) are not lost;
// an error is yielded only when a reconnect is refused.
func (c *Client) Stream(ctx context.Context, vehicleIDs ...string) iter.Seq2[LiveLocation, error] {
	return func(yield func(LiveLocation, error) bool) {
		last := ""
		for failures := 0; ctx.Err() == nil; {
			q := url.Values{}
			for _, id := range vehicleIDs {
				q.Add("vehicle_id", id)
			}
			u := c.base + "/vehicles/locations/stream"
			if len(q) > 0 {
				u += "?" + q.Encode()
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				yield(LiveLocation{}, err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+c.key)
			req.Header.Set("Accept", "text/event-stream")
			if last != "" {
				req.Header.Set("Last-Event-ID", last)
			}
			res, err := c.hc.Do(req)
			if err == nil && res.StatusCode != http.StatusOK {
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				_, err = decodeEnvelope(res, raw, nil)
				var fe *fleet.Error
				if errors.As(err, &fe) && fe.Code != fleet.CodeRateLimitExceeded && fe.Code != fleet.CodeUnavailable {
					yield(LiveLocation{}, err)
					return
				}
			}
			if err == nil {
				failures = 0
				stop := false
				last, stop = readStream(res.Body, last, yield)
				res.Body.Close()
				if stop {
					return
				}
			} else if failures++; failures > c.maxRetries {
				yield(LiveLocation{}, err)
				return
			}
			if werr := wait(ctx, time.Duration(250<<min(failures, 5))*time.Millisecond); werr != nil {
				return
			}
		}
	}
}

// readStream yields the events of one connection; it returns the last id
// seen and whether the caller stopped.
func readStream(body io.Reader, last string, yield func(LiveLocation, error) bool) (string, bool) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var id, event string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "location" && data != nil {
				var ll LiveLocation
				if json.Unmarshal(data, &ll.LocationRecord) == nil {
					ll.ID = id
					last = id
					if !yield(ll, nil) {
						return last, true
					}
				}
			}
			id, event, data = "", "", nil
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimSpace(line[5:])...)
		}
	}
	return last, false
}

// CreateStreamToken makes a token that opens one live stream of the
// client's key within 60 seconds, for a client that cannot send the key in
// a header: the URL of StreamURL.
func (c *Client) CreateStreamToken(ctx context.Context) (fleetwire.StreamToken, error) {
	var t fleetwire.StreamToken
	_, err := c.do(ctx, http.MethodPost, "/stream_tokens", nil, struct{}{}, &t)
	return t, err
}

// StreamURL returns the address of the live stream opened with a stream
// token (no Authorization header needed), of the given vehicles only when
// any are named: what a browser's EventSource is given.
func (c *Client) StreamURL(token string, vehicleIDs ...string) string {
	q := url.Values{fleetwire.StreamTokenParam: {token}}
	for _, id := range vehicleIDs {
		q.Add("vehicle_id", id)
	}
	return c.base + "/vehicles/locations/stream?" + q.Encode()
}
