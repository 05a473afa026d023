package fleethttp_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// get sends a GET with the given Accept-Encoding (none when empty), taking
// the answer as it comes on the wire: no transparent decompression.
func (e *env) rawGet(path, secret, acceptEncoding string, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res, b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A body of GzipMinBytes or more is gzipped when the client asks, the same
// bytes once decompressed; a smaller one, or a client that does not ask,
// gets it as it is. Every answer says it varies with Accept-Encoding.
func TestLargeAnswersAreGzipped(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	vid := e.vehicle(key, "Truck")
	now := e.clock.Now()
	var pts []any
	for i := range 500 {
		pts = append(pts, map[string]any{"latitude": 52.5 + float64(i)/1e4, "longitude": 13.4, "timestamp": now.Add(-time.Duration(500-i) * time.Second), "speed": 40})
	}
	is.Equal(e.do("POST", "/v1/vehicles/"+vid+"/locations", key, map[string]any{"locations": pts}).status, http.StatusOK)
	path := "/v1/vehicles/" + vid + "/locations"

	plain, plainBody := e.rawGet(path, key, "")
	is.Equal(plain.StatusCode, http.StatusOK)
	is.Equal(plain.Header.Get("Content-Encoding"), "")
	is.True(strings.Contains(plain.Header.Get("Vary"), "Accept-Encoding"))
	is.True(len(plainBody) > 20_000)

	zipped, zippedBody := e.rawGet(path, key, "gzip, deflate")
	is.Equal(zipped.StatusCode, http.StatusOK)
	is.Equal(zipped.Header.Get("Content-Encoding"), "gzip")
	is.True(strings.Contains(zipped.Header.Get("Vary"), "Accept-Encoding"))
	is.Equal(zipped.Header.Get("Content-Type"), "application/json")
	is.True(zipped.Header.Get("X-RateLimit-Remaining") != "")  // the headers are all there
	is.Equal(string(gunzip(t, zippedBody)), string(plainBody)) // the same answer
	is.True(len(zippedBody)*5 < len(plainBody))                // and much smaller

	refused, refusedBody := e.rawGet(path, key, "gzip;q=0")
	is.Equal(refused.Header.Get("Content-Encoding"), "")
	is.Equal(len(refusedBody), len(plainBody))

	// A small answer is not worth compressing.
	small, smallBody := e.rawGet("/v1/account", key, "gzip")
	is.Equal(small.StatusCode, http.StatusOK)
	is.Equal(small.Header.Get("Content-Encoding"), "")
	is.True(len(smallBody) < 1024)
	is.True(small.Header.Get("Content-Length") != "")

	// The document is large: compressed too.
	doc, docBody := e.rawGet("/v1/openapi.json", "", "gzip")
	is.Equal(doc.Header.Get("Content-Encoding"), "gzip")
	is.True(bytes.Equal(gunzip(t, docBody), fleethttp.OpenAPI))
}

// The gzipped and the plain form of an answer are two representations:
// each has its own strong ETag (RFC 9110 §8.8.3), and If-None-Match is
// honoured for the one it names. An answer too small to compress has one
// form and one tag.
func TestETagDiffersByEncoding(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	tags := make([]string, fleet.MaxTags)
	for i := range tags {
		tags[i] = fmt.Sprintf("%02d-%s", i, strings.Repeat("t", 30))
	}
	vid := e.do("POST", "/v1/vehicles", key, map[string]any{"name": "Truck 7", "tags": tags}).data()["vehicle_id"].(string)
	for _, path := range []string{"/v1/openapi.json", "/v1/vehicles/" + vid} {
		plain, plainBody := e.rawGet(path, key, "")
		zipped, _ := e.rawGet(path, key, "gzip")
		is.Equal(plain.StatusCode, http.StatusOK)
		is.True(len(plainBody) >= fleethttp.GzipMinBytes)
		is.Equal(zipped.Header.Get("Content-Encoding"), "gzip")
		p, z := plain.Header.Get("ETag"), zipped.Header.Get("ETag")
		is.True(strings.HasPrefix(p, `"`) && strings.HasSuffix(p, `"`)) // strong
		is.Equal(z, strings.TrimSuffix(p, `"`)+`-gzip"`)                // another tag for the gzipped form

		for _, c := range []struct {
			encoding, tag string
			status        int
			want          string
		}{
			{"", p, http.StatusNotModified, p},
			{"gzip", z, http.StatusNotModified, z},
			{"gzip", p, http.StatusOK, z}, // the client holds the other form
			{"", z, http.StatusOK, p},
			{"gzip", "W/" + z, http.StatusNotModified, z}, // If-None-Match compares weakly
		} {
			res, body := e.rawGet(path, key, c.encoding, "If-None-Match", c.tag)
			is.Equal(res.StatusCode, c.status) // path, encoding and tag
			is.Equal(res.Header.Get("ETag"), c.want)
			if c.status == http.StatusNotModified {
				is.Equal(len(body), 0)
			}
		}
	}
	// Too small to compress: the same tag whatever the client accepts.
	small, _ := e.rawGet("/v1/account", key, "")
	smallZ, _ := e.rawGet("/v1/account", key, "gzip")
	is.Equal(smallZ.Header.Get("Content-Encoding"), "")
	is.Equal(small.Header.Get("ETag"), smallZ.Header.Get("ETag"))
}

// The live stream is never compressed: each event must reach the client
// as it is written.
func TestStreamIsNotGzipped(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	req, err := http.NewRequest("GET", e.srv.URL+"/v1/vehicles/locations/stream", nil)
	is.NoErr(err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept-Encoding", "gzip")
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	is.NoErr(err)
	defer res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	is.Equal(res.Header.Get("Content-Encoding"), "")
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	is.NoErr(err)
	is.True(strings.HasPrefix(line, "retry:")) // readable as sent
}

// A GET of one resource carries an ETag; naming it in If-None-Match is
// answered 304 without a body until the resource changes. Lists carry
// none.
func TestSingleResourcesHaveValidators(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	vid := e.vehicle(key, "Truck")
	r := e.do("GET", "/v1/vehicles/"+vid, key, nil)
	is.Equal(r.status, http.StatusOK)
	tag := r.header.Get("ETag")
	is.True(strings.HasPrefix(tag, `"`) && len(tag) > 10)
	is.Equal(e.do("GET", "/v1/vehicles/"+vid, key, nil).header.Get("ETag"), tag) // stable

	for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
		nm := e.do("GET", "/v1/vehicles/"+vid, key, nil, "If-None-Match", inm)
		is.Equal(nm.status, http.StatusNotModified) // inm
		is.Equal(len(nm.body), 0)
		is.Equal(nm.header.Get("ETag"), tag)
		is.True(nm.header.Get("X-RateLimit-Remaining") != "") // counted like any request
	}
	is.Equal(e.do("GET", "/v1/vehicles/"+vid, key, nil, "If-None-Match", `"other"`).status, http.StatusOK)

	e.do("PATCH", "/v1/vehicles/"+vid, key, map[string]any{"name": "Truck 2"})
	changed := e.do("GET", "/v1/vehicles/"+vid, key, nil, "If-None-Match", tag)
	is.Equal(changed.status, http.StatusOK) // changed: the body again
	is.True(changed.header.Get("ETag") != tag)

	list := e.do("GET", "/v1/vehicles", key, nil)
	is.Equal(list.header.Get("ETag"), "") // a page has none
	// Errors have none either.
	is.Equal(e.do("GET", "/v1/vehicles/veh_00000000000000000000000000", key, nil).header.Get("ETag"), "")
}
