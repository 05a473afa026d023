package fleethttp

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestAcceptsGzip(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=0.5", true},
		{"br;q=1.0, gzip;q=0.8, *;q=0.1", true},
		{"x-gzip", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"gzip;q=0.001", true},
		{"*", true},
		{"*;q=0", false},
		{"identity", false},
		{"br, *;q=0", false},
		{"gzip;q=0, *", false}, // gzip refused by name
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if c.header != "" {
			r.Header.Set("Accept-Encoding", c.header)
		}
		is.Equal(acceptsGzip(r), c.want) // c.header
	}
}

// historyJSON is a page of n location points as the API encodes it.
func historyJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"success":true,"data":[`)
	t := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"latitude":%.6f,"longitude":%.6f,"timestamp":%q,"speed":%.1f,"heading":%d,"odometer_km":null}`,
			52.5+float64(i%997)*1e-4, 13.4+float64(i%991)*1e-4, t.Add(time.Duration(i)*2*time.Second).Format(time.RFC3339), 30+float64(i%40), i%360)
	}
	b.WriteString(`],"pagination":{"next_cursor":null,"has_more":false}}` + "\n")
	return b.Bytes()
}

// BenchmarkGzip measures what compressing an answer costs and saves, by
// body size, at BestSpeed (the level used) and at the default level (the
// comparison, in the same run): the figures GzipMinBytes and gzipLevel
// are chosen from (docs/performance.md). It reports the compressed size
// as a share of the body (out/in) and the bytes saved per answer.
func BenchmarkGzip(b *testing.B) {
	for _, points := range []int{2, 8, 40, 400, 10_000} { // ≈ 330 B, 1 KB, 5 KB, 50 KB, 1.2 MB
		body := historyJSON(points)
		for _, level := range []int{gzip.BestSpeed, gzip.DefaultCompression} {
			b.Run(fmt.Sprintf("bytes=%d/level=%d", len(body), level), func(b *testing.B) {
				var out bytes.Buffer
				z, _ := gzip.NewWriterLevel(&out, level)
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					out.Reset()
					z.Reset(&out)
					z.Write(body)
					z.Close()
				}
				b.ReportMetric(float64(out.Len())/float64(len(body)), "out/in")
				b.ReportMetric(float64(len(body)-out.Len()), "saved-bytes")
			})
		}
	}
}
