package fleet_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestWorkingHoursBoundaries: from is inclusive and to exclusive, in the
// zone's local time (summer and winter offsets alike), a listed day starts
// a window, and an overnight window runs into the next day, which need not
// be listed.
func TestWorkingHoursBoundaries(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(y int, m time.Month, d, hh, mm, ss int) time.Time {
		return time.Date(y, m, d, hh, mm, ss, 0, berlin).UTC()
	}
	day := fleet.WorkingHours{TZ: "Europe/Berlin", Days: []string{"mon", "tue", "wed", "thu", "fri"}, From: "07:00", To: "19:00"}
	night := fleet.WorkingHours{TZ: "Europe/Berlin", Days: []string{"fri"}, From: "22:00", To: "06:00"}
	every := fleet.WorkingHours{TZ: "America/New_York", From: "08:30", To: "17:00"}
	cases := []struct {
		name string
		h    fleet.WorkingHours
		at   time.Time
		want bool
	}{
		{"from is inclusive", day, at(2026, 11, 23, 7, 0, 0), true},               // Monday
		{"a second before from", day, at(2026, 11, 23, 6, 59, 59), false},         //
		{"to is exclusive", day, at(2026, 11, 23, 19, 0, 0), false},               //
		{"a second before to", day, at(2026, 11, 23, 18, 59, 59), true},           //
		{"a day not listed", day, at(2026, 11, 28, 10, 0, 0), false},              // Saturday
		{"summer time", day, at(2026, 7, 6, 7, 0, 0), true},                       // 05:00 UTC
		{"summer, before from", day, at(2026, 7, 6, 6, 59, 0), false},             //
		{"overnight, from on its day", night, at(2026, 11, 27, 22, 0, 0), true},   // Friday
		{"overnight, after midnight", night, at(2026, 11, 28, 5, 59, 0), true},    // Saturday morning
		{"overnight, to is exclusive", night, at(2026, 11, 28, 6, 0, 0), false},   //
		{"overnight, the day before", night, at(2026, 11, 27, 5, 0, 0), false},    // Friday morning: Thursday not listed
		{"overnight, evening of next", night, at(2026, 11, 28, 22, 30, 0), false}, // Saturday evening
		{"no days: every day", every, time.Date(2026, 11, 29, 13, 30, 0, 0, time.UTC), true},
		{"no days, the zone's own time", every, time.Date(2026, 11, 29, 13, 29, 0, 0, time.UTC), false}, // 08:29 in New York
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			got, err := fleet.WithinHours(c.h, c.at)
			is.NoErr(err)
			is.Equal(got, c.want)
		})
	}
}

func attrs(a ...fleet.Attribute) fleet.Attributes { return fleet.Attributes(a).Sort() }

func (m *maint) point(at time.Time, speed float64, a ...fleet.Attribute) fleet.Point {
	return fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: at, Speed: &speed, Attributes: attrs(a...)}
}

func alertData(t *testing.T, a fleet.Alert) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(a.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestIdlingRule: an idling rule opens once idling (ignition on, below 5
// km/h) passes its after_minutes, counted across batches, not before and
// once while it lasts; its alert resolves when the vehicle moves off. A
// shorter idling opens nothing.
func TestIdlingRule(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	m.rule(fleet.AlertRule{Type: fleet.AlertIdling, AfterMinutes: spd2(10)})
	t0 := m.clk.Now().Add(-time.Hour)
	on := fleet.BoolAttr(fleet.AttrIgnition, true)
	idle := func(from, to int) []fleet.Point {
		var pts []fleet.Point
		for i := from; i <= to; i++ {
			pts = append(pts, m.point(t0.Add(time.Duration(i)*time.Minute), 0, on))
		}
		return pts
	}
	m.ingest(append(idle(0, 8), m.point(t0.Add(9*time.Minute), 40, on))...) // 8 minutes, then off
	m.ingest(idle(10, 19)...)                                               // 9 minutes so far
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertIdling})), 0)  // not long enough
	m.ingest(idle(20, 22)...)
	got := m.alerts(fleet.AlertFilter{Type: fleet.AlertIdling})
	is.Equal(len(got), 1) // one alert while the idling lasts
	is.Equal(got[0].Status, fleet.AlertOpen)
	d := alertData(t, got[0])
	is.Equal(d["minutes"], 10.0)
	is.Equal(d["at"], t0.Add(20*time.Minute).Format(time.RFC3339))
	is.Equal(d["idling_since"], t0.Add(10*time.Minute).Format(time.RFC3339))
	m.ingest(idle(20, 22)...) // resent: nothing new
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertIdling})), 1)
	m.ingest(m.point(t0.Add(23*time.Minute), 30, on)) // drives off
	got = m.alerts(fleet.AlertFilter{Type: fleet.AlertIdling})
	is.Equal(len(got), 1)
	is.Equal(got[0].Status, fleet.AlertResolved)
	is.Equal(len(m.events(fleet.EventAlertResolved)), 1)
}

// TestFuelDropRule: fuel falling by the rule's threshold between
// consecutive forward points while the vehicle stands opens a fuel_drop
// alert; the same fall while driving, a smaller one, or one in the other
// unit does not; a resent point opens nothing.
func TestFuelDropRule(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	m.rule(fleet.AlertRule{Type: fleet.AlertFuelDrop, RuleParams: fleet.RuleParams{ThresholdL: spd(10)}})
	t0 := m.clk.Now().Add(-time.Hour)
	l := func(v float64) fleet.Attribute { return fleet.NumberAttr(fleet.AttrFuelL, v) }
	pct := func(v float64) fleet.Attribute { return fleet.NumberAttr(fleet.AttrFuelLevel, v) }
	theft := m.point(t0.Add(4*time.Minute), 0, l(40))
	m.ingest(m.point(t0, 60, l(80), pct(80)), m.point(t0.Add(time.Minute), 60, l(60), pct(60))) // burnt driving
	m.ingest(m.point(t0.Add(2*time.Minute), 0, l(56), pct(40)))                                 // 4 l stopping; percent: another unit
	m.ingest(m.point(t0.Add(3*time.Minute), 0, l(55)))                                          // 1 l standing
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertFuelDrop})), 0)
	m.ingest(theft) // 15 l standing, in a batch of its own
	got := m.alerts(fleet.AlertFilter{Type: fleet.AlertFuelDrop})
	is.Equal(len(got), 1)
	d := alertData(t, got[0])
	is.Equal(d["from"], 55.0)
	is.Equal(d["to"], 40.0)
	is.Equal(d["unit"], "l")
	_, err := m.svc.ResolveAlert(ctx, m.p, got[0].ID)
	is.NoErr(err)
	m.ingest(theft) // resent
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertFuelDrop})), 1)
}

// TestHarshDrivingDerived: speed changing faster than threshold_g between
// forward points at most 5 s apart raises hard_braking or
// hard_acceleration; points further apart, or a gentler change, do not; a
// rule for braking alone ignores acceleration.
func TestHarshDrivingDerived(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	braking := m.rule(fleet.AlertRule{Type: fleet.AlertHarshDriving, RuleParams: fleet.RuleParams{Types: []string{fleet.AlarmHardBraking}}})
	any := m.rule(fleet.AlertRule{Type: fleet.AlertHarshDriving, RuleParams: fleet.RuleParams{ThresholdG: spd(0.5)}})
	t0 := m.clk.Now().Add(-time.Hour)
	// 0.4 g is 14.12 km/h a second.
	m.ingest(m.point(t0, 0), m.point(t0.Add(6*time.Second), 90), // 90 km/h in 6 s: too far apart
		m.point(t0.Add(8*time.Second), 110),  // 20 km/h in 2 s: 0.28 g
		m.point(t0.Add(10*time.Second), 150)) // 40 km/h in 2 s: 0.57 g, acceleration
	got := m.alerts(fleet.AlertFilter{Type: fleet.AlertHarshDriving})
	is.Equal(len(got), 1) // the rule for any type, above its 0.5 g
	is.Equal(got[0].RuleID, any.ID)
	d := alertData(t, got[0])
	is.Equal(d["type"], fleet.AlarmHardAcceleration)
	is.Equal(d["source"], "derived")
	is.Equal(d["g"], 0.57)
	m.ingest(m.point(t0.Add(12*time.Second), 120)) // 30 km/h in 2 s: 0.42 g braking
	got = m.alerts(fleet.AlertFilter{Type: fleet.AlertHarshDriving})
	is.Equal(len(got), 2)
	is.Equal(got[1].RuleID, braking.ID)
	is.Equal(alertData(t, got[1])["type"], fleet.AlarmHardBraking)
}

func spd2(v int) *int { return &v }

// TestAlarmRule: an alarm a point raises opens the alerts of the alarm
// rules that name it (or every alarm), once while open; a resent point
// and a repeat within five minutes open nothing, a later one after the
// alert is resolved does.
func TestAlarmRule(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	every := m.rule(fleet.AlertRule{Type: fleet.AlertAlarm, Severity: fleet.SeverityCritical})
	tow := m.rule(fleet.AlertRule{Type: fleet.AlertAlarm, RuleParams: fleet.RuleParams{Alarms: []string{"tow"}}})
	t0 := m.clk.Now().Add(-time.Hour)
	sos := m.point(t0.Add(time.Minute), 0, fleet.TextAttr(fleet.AttrAlarm, "sos"))
	m.ingest(m.point(t0, 0), sos)
	got := m.alerts(fleet.AlertFilter{Type: fleet.AlertAlarm})
	is.Equal(len(got), 1) // the rule for every alarm; not the one for tow
	is.Equal(got[0].RuleID, every.ID)
	is.Equal(got[0].Severity, fleet.SeverityCritical)
	is.Equal(alertData(t, got[0])["alarm"], "sos")
	is.Equal(alertData(t, got[0])["device_id"], nil) // an API client's point
	_, err := m.svc.ResolveAlert(ctx, m.p, got[0].ID)
	is.NoErr(err)
	m.ingest(sos)                                                                       // resent
	m.ingest(m.point(t0.Add(3*time.Minute), 0, fleet.TextAttr(fleet.AttrAlarm, "sos"))) // a repeat within 5 minutes
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertAlarm})), 1)
	m.ingest(m.point(t0.Add(10*time.Minute), 0, fleet.TextAttr(fleet.AttrAlarm, "sos,tow")))
	got = m.alerts(fleet.AlertFilter{Type: fleet.AlertAlarm})
	is.Equal(len(got), 3) // sos again, and tow
	is.Equal(got[1].RuleID, every.ID)
	is.Equal(got[2].RuleID, tow.ID)
}

// TestIgnitionOnOutsideHours: an ignition_on rule with working hours opens
// when the ignition goes on outside them (to is exclusive), not inside
// (from is inclusive); one without opens on every ignition on; the first
// known ignition emits nothing, and a resent point nothing either.
func TestIgnitionOnOutsideHours(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	hours := m.rule(fleet.AlertRule{Type: fleet.AlertIgnitionOn, RuleParams: fleet.RuleParams{OutsideHours: &fleet.WorkingHours{
		TZ: "Europe/Berlin", Days: []string{"mon", "tue", "wed", "thu", "fri"}, From: "07:00", To: "19:00"}}})
	berlin, err := time.LoadLocation("Europe/Berlin")
	is.NoErr(err)
	// Thursday 19 November 2026, Berlin time (UTC+1).
	at := func(hh, mm int) time.Time { return time.Date(2026, 11, 19, hh, mm, 0, 0, berlin) }
	off, on := fleet.BoolAttr(fleet.AttrIgnition, false), fleet.BoolAttr(fleet.AttrIgnition, true)
	m.ingest(m.point(at(6, 0), 0, on), m.point(at(6, 50), 0, off)) // the first value: nothing
	m.ingest(m.point(at(7, 0), 0, on))                             // at from: inside
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertIgnitionOn})), 0)
	late := m.point(at(19, 0), 0, on)
	m.ingest(m.point(at(18, 0), 0, off), late) // at to: outside
	got := m.alerts(fleet.AlertFilter{Type: fleet.AlertIgnitionOn})
	is.Equal(len(got), 1)
	is.Equal(got[0].RuleID, hours.ID)
	d := alertData(t, got[0])
	is.Equal(d["local_time"], "2026-11-19T19:00:00")
	is.Equal(d["tz"], "Europe/Berlin")
	_, err = m.svc.ResolveAlert(ctx, m.p, got[0].ID)
	is.NoErr(err)
	m.ingest(late) // resent
	is.Equal(len(m.alerts(fleet.AlertFilter{Type: fleet.AlertIgnitionOn})), 1)
	every := m.rule(fleet.AlertRule{Type: fleet.AlertIgnitionOn})
	m.ingest(m.point(at(20, 0), 0, off), m.point(at(20, 30), 0, on))
	got = m.alerts(fleet.AlertFilter{Type: fleet.AlertIgnitionOn})
	is.Equal(len(got), 3) // the working hours' rule again, and the one for every ignition on
	is.Equal(got[1].RuleID, hours.ID)
	is.Equal(got[2].RuleID, every.ID)
}

// TestPowerCutRule: a power_cut alarm opens the rule's alert; power back
// above threshold_v resolves it, and so does power_restored; the point
// that raised the cut does not resolve it, whatever its voltage.
func TestPowerCutRule(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	m.rule(fleet.AlertRule{Type: fleet.AlertPowerCut, Severity: fleet.SeverityCritical})
	t0 := m.clk.Now().Add(-time.Hour)
	volts := func(v float64) fleet.Attribute { return fleet.NumberAttr(fleet.AttrPowerV, v) }
	cut := fleet.TextAttr(fleet.AttrAlarm, fleet.AlarmPowerCut)
	m.ingest(m.point(t0, 0, volts(12.6)), m.point(t0.Add(time.Minute), 0, volts(12.5), cut))
	got := m.alerts(fleet.AlertFilter{Type: fleet.AlertPowerCut})
	is.Equal(len(got), 1)
	is.Equal(got[0].Status, fleet.AlertOpen) // its own point's voltage does not resolve it
	m.ingest(m.point(t0.Add(2*time.Minute), 0, volts(0.4)), m.point(t0.Add(3*time.Minute), 0, volts(8.9)))
	is.Equal(m.alerts(fleet.AlertFilter{Type: fleet.AlertPowerCut})[0].Status, fleet.AlertOpen) // not above 9 V yet
	m.ingest(m.point(t0.Add(4*time.Minute), 0, volts(12.4)))
	is.Equal(m.alerts(fleet.AlertFilter{Type: fleet.AlertPowerCut})[0].Status, fleet.AlertResolved) // back above 9 V

	m.ingest(m.point(t0.Add(10*time.Minute), 0, cut, volts(0)))
	m.ingest(m.point(t0.Add(11*time.Minute), 0, fleet.TextAttr(fleet.AttrAlarm, fleet.AlarmPowerRestored)))
	got = m.alerts(fleet.AlertFilter{Type: fleet.AlertPowerCut})
	is.Equal(len(got), 2)
	is.Equal(got[1].Status, fleet.AlertResolved) // power_restored
}

// TestHarshDrivingRaised: a harsh alarm the device raised opens the
// harsh_driving rules of its type.
func TestHarshDrivingRaised(t *testing.T) {
	is := is.New(t)
	m := newAlerts(t)
	cornering := m.rule(fleet.AlertRule{Type: fleet.AlertHarshDriving, RuleParams: fleet.RuleParams{Types: []string{fleet.AlarmHardCornering}}})
	m.rule(fleet.AlertRule{Type: fleet.AlertHarshDriving, RuleParams: fleet.RuleParams{Types: []string{fleet.AlarmHardBraking}}})
	t0 := m.clk.Now().Add(-time.Hour)
	m.ingest(m.point(t0, 50), m.point(t0.Add(time.Minute), 50, fleet.TextAttr(fleet.AttrAlarm, fleet.AlarmHardCornering)))
	got := m.alerts(fleet.AlertFilter{Type: fleet.AlertHarshDriving})
	is.Equal(len(got), 1)
	is.Equal(got[0].RuleID, cornering.ID)
	is.Equal(alertData(t, got[0])["source"], "device")
}
