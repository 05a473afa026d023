package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// --cors-origins (or FLEET_CORS_ORIGINS) lets the listed origins' pages call
// the API: their preflight is 204 without a key; others get no CORS headers.
func TestCORSOriginsFlag(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"FLEET_DB": "memory:"}, []string{"--cors-origins", "https://app.example.com, http://localhost:5173"}},
		{map[string]string{"FLEET_DB": "memory:", "FLEET_CORS_ORIGINS": "https://app.example.com"}, nil},
	} {
		s := start(t, tc.env, tc.args...)
		preflight := func(origin string) *http.Response {
			req, _ := http.NewRequest("OPTIONS", s.base+"/v1/vehicles/locations/stream", nil)
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "GET")
			res, err := http.DefaultClient.Do(req)
			is.NoErr(err)
			res.Body.Close()
			return res
		}
		res := preflight("https://app.example.com")
		is.Equal(res.StatusCode, http.StatusNoContent)
		is.Equal(res.Header.Get("Access-Control-Allow-Origin"), "https://app.example.com")
		is.True(strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Last-Event-ID"))
		res = preflight("https://other.example.com")
		is.Equal(res.StatusCode, http.StatusUnauthorized)
		is.Equal(res.Header.Get("Access-Control-Allow-Origin"), "")
		is.NoErr(s.stop())
	}
}

func TestCORSOriginsFlagRefusesWhatIsNoOrigin(t *testing.T) {
	is := is.New(t)
	for _, env := range []map[string]string{
		{"FLEET_CORS_ORIGINS": "*"},
		{"FLEET_CORS_ORIGINS": "https://app.example.com/dashboard"},
	} {
		env["FLEET_DB"] = "memory:"
		var out, errb syncBuf
		err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"}, func(k string) string { return env[k] }, &out, &errb)
		is.True(err != nil) // refused before the server starts
		is.True(strings.Contains(err.Error(), "--cors-origins"))
	}
}

// The reference server opens the live stream to a stream token, as a
// browser's EventSource sends it: no Authorization header, the page's
// Origin; the token opens one stream only.
func TestServeStreamToken(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_CORS_ORIGINS": "https://app.example.com"}, "--demo")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	req, _ := http.NewRequest("POST", s.base+"/v1/stream_tokens", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	var created struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	is.NoErr(json.NewDecoder(res.Body).Decode(&created))
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusCreated)

	var cancels []context.CancelFunc
	open := func() *http.Response {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/v1/vehicles/locations/stream?token="+created.Data.Token, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Origin", "https://app.example.com")
		res, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		return res
	}
	res = open()
	is.Equal(res.StatusCode, http.StatusOK)
	is.Equal(res.Header.Get("Content-Type"), "text/event-stream")
	is.Equal(res.Header.Get("Access-Control-Allow-Origin"), "https://app.example.com")
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	is.NoErr(err)
	is.Equal(line, "retry: 2000\n")                      // the stream has begun
	is.Equal(open().StatusCode, http.StatusUnauthorized) // spent
	for _, cancel := range cancels {
		cancel() // the client goes, so the server stops without waiting on it
	}
	res.Body.Close()
	is.NoErr(s.stop())
	is.True(!strings.Contains(s.stderr.String(), created.Data.Token)) // never logged
}

// A server with live streams open stops at once and cleanly: it ends the
// streams (their clients reconnect elsewhere) instead of waiting on them
// until the shutdown deadline.
func TestShutdownEndsLiveStreams(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	req, _ := http.NewRequest("GET", s.base+"/v1/vehicles/locations/stream", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	defer res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	is.NoErr(s.stop()) // a clean stop, not the shutdown deadline's error
	_, err = io.Copy(io.Discard, res.Body)
	is.NoErr(err) // the stream ended: the body is complete
}
