package devproto

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// apiAttrName is API.md §14's rule for an attribute's name.
var apiAttrName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

func TestAttrNameAndText(t *testing.T) {
	is := is.New(t)
	for _, ok := range []string{"a", "ignition", "io65535", "temp1_c", strings.Repeat("x", 32)} {
		is.True(AttrNameOK(ok)) // ok
		is.True(apiAttrName.MatchString(ok))
	}
	for _, bad := range []string{"", "1a", "_a", "Ignition", "battery level", "ä", strings.Repeat("x", 33), "a-b"} {
		is.True(!AttrNameOK(bad)) // bad
	}
	is.True(AttrTextOK(strings.Repeat("é", 32)))  // 64 bytes
	is.True(!AttrTextOK(strings.Repeat("é", 33))) // 66 bytes
	is.True(!AttrTextOK("a\x00b"))
	is.True(!AttrTextOK("a\u0085b")) // a C1 control
	is.True(!AttrTextOK("\xff"))
	is.True(AttrTextOK("help me"))
}

func TestSnakeCase(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{
		"batteryLevel":       "battery_level",
		"driverUniqueId":     "driver_unique_id",
		"device_string_test": "device_string_test",
		"HDOP":               "hdop",
		"fuelRate2":          "fuel_rate2",
		"Fuel-Rate":          "fuel_rate",
		"io240":              "io240",
		"OBDSpeed":           "obd_speed",
		"name with spaces":   "name_with_spaces",
		"tag1Id":             "tag1_id",
	} {
		got, ok := SnakeCase(in)
		is.True(ok) // in
		is.Equal(got, want)
	}
	for _, bad := range []string{"1abc", "_", "ünits", strings.Repeat("a", 33), "---"} {
		_, ok := SnakeCase(bad)
		is.True(!ok) // bad
	}
}

func TestAlarmJoin(t *testing.T) {
	is := is.New(t)
	a := AlarmJoin("", "sos")
	a = AlarmJoin(a, "power_cut")
	a = AlarmJoin(a, "sos")
	is.Equal(a, "sos,power_cut")
	long := ""
	for _, w := range []string{"hard_acceleration", "hard_braking", "hard_cornering", "accident", "overspeed", "tow", "sos"} {
		long = AlarmJoin(long, w)
	}
	is.Equal(len(long), 64)
	is.Equal(long, "hard_acceleration,hard_braking,hard_cornering,accident,overspeed") // tow, sos would pass 64 bytes
}

// TestStrCacheReusesStrings: the same bytes again give the same string
// without allocating; other bytes a new one.
func TestStrCacheReusesStrings(t *testing.T) {
	is := is.New(t)
	var c strCache
	a := c.get([]byte("00AB"))
	is.Equal(a, "00AB")
	allocs := testing.AllocsPerRun(100, func() { _ = c.get([]byte("00AB")) })
	is.Equal(allocs, 0.0)
	for i := range 10 {
		is.Equal(c.get([]byte(strconv.Itoa(i))), strconv.Itoa(i))
	}
	is.Equal(c.get([]byte("00AB")), "00AB") // forgotten, made again
	is.Equal(c.get(nil), "")

	decimal := func(v uint64) func([]byte) []byte {
		return func(b []byte) []byte { return strconv.AppendUint(b, v, 10) }
	}
	is.Equal(c.number(42, 'd', decimal(42)), "42")
	is.Equal(c.number(42, 'x', func(b []byte) []byte { return strconv.AppendUint(b, 42, 16) }), "2a") // another format
	allocs = testing.AllocsPerRun(100, func() { _ = c.number(42, 'd', decimal(42)) })
	is.Equal(allocs, 0.0)
	is.Equal(c.number(43, 'd', decimal(43)), "43")
}
