package prototest

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// apiAttrNameRule is API.md §14's rule for an attribute's name.
var apiAttrNameRule = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// vocabAlarms is §14's list of alarm words.
var vocabAlarms = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`sos power_cut power_restored low_power low_battery vibration
		movement overspeed tow tampering jamming door hard_acceleration hard_braking hard_cornering
		accident fall_down fatigue_driving temperature geofence_enter geofence_exit general`) {
		vocabAlarms[w] = true
	}
}

// AttrProblem is why the API would refuse a, or why a breaks the
// vocabulary; "" when it is sound: a name of §14's rule, a finite number,
// a boolean of 0 or 1, text of at most 64 bytes of UTF-8 without control
// characters; a name of the vocabulary with the vocabulary's type, and an
// alarm of the vocabulary's words.
func AttrProblem(a devproto.Attribute) string {
	name := a.Name()
	if !apiAttrNameRule.MatchString(name) {
		return "a name the API refuses"
	}
	switch a.Kind {
	case devproto.AttrNumber:
		if math.IsNaN(a.Num) || math.IsInf(a.Num, 0) {
			return "a number that is not finite"
		}
	case devproto.AttrBool:
		if a.Num != 0 && a.Num != 1 {
			return "a boolean of " + strconv.FormatFloat(a.Num, 'g', -1, 64)
		}
	case devproto.AttrString:
		if !devproto.AttrTextOK(a.Str) {
			return "a text the API refuses"
		}
	default:
		return "no type"
	}
	if kind, ok := devproto.VocabKind(name); ok && kind != a.Kind {
		return "not of the vocabulary's type"
	}
	if name == "alarm" {
		for _, w := range strings.Split(a.Str, ",") {
			if !vocabAlarms[w] {
				return "alarm word " + strconv.Quote(w) + " not in the vocabulary"
			}
		}
	}
	return ""
}

// CheckAttrsSound fails when an attribute of m's positions is not sound
// (AttrProblem).
func CheckAttrsSound(t testing.TB, m *devproto.Message) {
	t.Helper()
	for _, p := range m.Positions {
		for _, a := range p.Attrs {
			if err := AttrProblem(a); err != "" {
				t.Fatalf("attribute %s = %#v: %s", a.Name(), a.Value(), err)
			}
		}
	}
}

// IsVocabAlarm reports whether w is one of §14's alarm words.
func IsVocabAlarm(w string) bool { return vocabAlarms[w] }
