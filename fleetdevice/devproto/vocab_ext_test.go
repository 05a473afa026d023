package devproto_test

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
	"github.com/fleetkit/fleetapi/fleetdevice/internal/prototest"
	"github.com/matryer/is"
)

func TestTraccarAlarmWords(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{
		"sos": "sos", "powerCut": "power_cut", "powerRestored": "power_restored", "lowBattery": "low_battery",
		"hardBraking": "hard_braking", "fallDown": "fall_down", "geofenceEnter": "geofence_enter",
		"power_cut": "power_cut", "general": "general",
	} {
		got, ok := devproto.TraccarAlarm(in)
		is.True(ok)
		is.Equal(got, want)
		is.True(prototest.IsVocabAlarm(got)) // a word of §14
	}
	for _, none := range []string{"geofence", "removing", "powerOff", "fuelLeak", "idle", ""} {
		_, ok := devproto.TraccarAlarm(none)
		is.True(!ok) // none
	}
}
