package devproto

import (
	"fmt"
	"math"
	"regexp"
	"testing"

	"github.com/matryer/is"
)

func TestJavaSplitDropsTrailingEmptyFields(t *testing.T) {
	is := is.New(t)
	is.Equal(JavaSplit(nil, "a,,b,,", ','), []string{"a", "", "b"})
	is.Equal(JavaSplit(nil, ",a", ','), []string{"", "a"})
	is.Equal(len(JavaSplit(nil, ",,,", ',')), 0)
}

func TestSetAttrReplacesAKeyAndBoundsTheCount(t *testing.T) {
	is := is.New(t)
	var p Position
	SetNum(&p, "hdop", 1)
	SetNum(&p, "hdop", 2)
	SetStr(&p, "empty", "")
	SetNum(&p, "nan", math.NaN())
	is.Equal(len(p.Attrs), 1) // one hdop; no empty string, no NaN
	is.Equal(p.Attrs[0].Num, 2.0)
	for i := range 2 * MaxAttrs {
		SetNum(&p, fmt.Sprint("k", i), 1)
	}
	is.Equal(len(p.Attrs), MaxAttrs)
}

func TestParseCompactTime(t *testing.T) {
	is := is.New(t)
	got, ok := ParseCompactTime("20240229235959")
	is.True(ok)
	is.Equal(got.Format("2006-01-02T15:04:05Z07:00"), "2024-02-29T23:59:59Z")
	for _, impossible := range []string{"20230231120000", "20230229120000", "20241301000000", "20240101240000", "20240101005960"} {
		got, ok := ParseCompactTime(impossible)
		is.True(ok)           // digits
		is.True(got.IsZero()) // of no time: never rolled over into another
	}
	for _, bad := range []string{"", "2024022923595", "202402292359591", "2024010100006x"} {
		_, ok := ParseCompactTime(bad)
		is.True(!ok) // not a time
	}
}

func TestTakePositionReusesAttributes(t *testing.T) {
	is := is.New(t)
	var m Message
	p := NextPosition(&m)
	SetNum(p, "a", 1)
	SetNum(p, "b", 2)
	m.Reset()
	p = NextPosition(&m)
	is.Equal(len(p.Attrs), 0)  // a fresh position
	is.True(cap(p.Attrs) >= 2) // that keeps the array of the one before
	is.Equal(p.Latitude, 0.0)
}

func TestNonCapturing(t *testing.T) {
	is := is.New(t)
	is.Equal(NonCapturing(`(a)\((b)[(](?:c)(d|(e))`), `(?:a)\((?:b)[(](?:c)(?:d|(?:e))`)
	p := NewPattern().Number("(d+),").Number("(d+.d)?,").Expression("([NS])").Optional(1).Text("$")
	re := regexp.MustCompile(NonCapturing(p.String()))
	is.Equal(re.NumSubexp(), 0)
	// The same matches as the pattern with its groups.
	for _, s := range []string{"12,3.5,N$", "12,,$", "x12,3.5,S$y", "12,3.5,E$"} {
		is.Equal(re.FindStringIndex(s), p.Anywhere().FindStringIndex(s))
	}
}

// OnEarth is false for coordinates out of range and for those that are
// no number at all.
func TestOnEarth(t *testing.T) {
	is := is.New(t)
	is.True(OnEarth(90, -180))
	is.True(OnEarth(-90, 180))
	for _, c := range [][2]float64{{90.1, 0}, {0, -180.1}, {math.NaN(), 0}, {0, math.NaN()}, {math.Inf(1), 0}, {0, math.Inf(-1)}} {
		is.True(!OnEarth(c[0], c[1])) // off Earth
	}
}
