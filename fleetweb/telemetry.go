package fleetweb

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// What a vehicle's page shows of its telematics (API.md §14): the state
// its reports left (ignition, power, fuel, engine hours, since when), the
// day's alarms in words, and the latest report's attributes on the map.

// maxDayAlarms is how many alarms of a day a vehicle's page lists; the
// events it reads for them are bounded by maxAlarmEvents.
const (
	maxDayAlarms   = 50
	maxAlarmEvents = 2000
)

// alarmWords say an alarm of the vocabulary as a fleet manager reads it.
var alarmWords = map[string]string{
	"sos":               "SOS button pressed",
	"power_cut":         "Power cut: the tracker lost the vehicle's power",
	"power_restored":    "Power restored",
	"low_power":         "Low vehicle power",
	"low_battery":       "Low tracker battery",
	"vibration":         "Vibration",
	"movement":          "Moved while parked",
	"overspeed":         "Overspeed (set on the tracker)",
	"tow":               "Towing: moved with the ignition off",
	"tampering":         "Tracker tampered with",
	"jamming":           "Signal jamming",
	"door":              "Door opened",
	"hard_acceleration": "Harsh acceleration",
	"hard_braking":      "Harsh braking",
	"hard_cornering":    "Harsh cornering",
	"accident":          "Crash detected",
	"fall_down":         "Fall detected",
	"fatigue_driving":   "Driver fatigue",
	"temperature":       "Temperature out of range",
	"geofence_enter":    "Entered the tracker's own zone",
	"geofence_exit":     "Left the tracker's own zone",
	"general":           "Alarm",
}

// alarmText says an alarm in words; one the page does not know is shown
// as its name.
func alarmText(alarm string) string {
	if s, ok := alarmWords[alarm]; ok {
		return s
	}
	s := strings.ReplaceAll(alarm, "_", " ")
	if s == "" {
		return "Alarm"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// telemetryView is the vehicle's telematics state in words; Known is
// whether any report carried any of it.
type telemetryView struct {
	Known                                  bool
	Ignition, Power, Fuel, EngineHours, At string
}

func vehicleTelemetry(v fleet.Vehicle, loc *time.Location, now time.Time) telemetryView {
	t := telemetryView{Ignition: "—", Power: "—", Fuel: "—", EngineHours: "—"}
	if v.Ignition != nil {
		t.Known, t.Ignition = true, "off"
		if *v.Ignition {
			t.Ignition = "on"
		}
	}
	if v.PowerV != nil {
		t.Known, t.Power = true, strconv.FormatFloat(*v.PowerV, 'f', 1, 64)+" V"
	}
	var fuel []string
	if v.FuelLevel != nil {
		fuel = append(fuel, strconv.FormatFloat(*v.FuelLevel, 'f', 0, 64)+" %")
	}
	if v.FuelL != nil {
		fuel = append(fuel, strconv.FormatFloat(*v.FuelL, 'f', 1, 64)+" l")
	}
	if len(fuel) > 0 {
		t.Known, t.Fuel = true, strings.Join(fuel, " · ")
	}
	if v.EngineHours != nil {
		t.Known, t.EngineHours = true, hours(*v.EngineHours)
	}
	if v.TelemetryAt != nil {
		t.At = localTime(*v.TelemetryAt, loc) + " (" + ago(*v.TelemetryAt, now) + ")"
	}
	return t
}

// hours writes engine hours with a thousands separator and a tenth.
func hours(h float64) string {
	whole := int(h)
	tenth := int((h-float64(whole))*10 + 0.5)
	if tenth == 10 {
		whole, tenth = whole+1, 0
	}
	return num(whole) + "." + strconv.Itoa(tenth) + " h"
}

// alarmRow is one alarm of the day: when (the report's time), what in
// words, where.
type alarmRow struct {
	At, What, Where string
}

// vehicleAlarms reads the day's device.alarm events of the vehicle, the
// newest first: the events are read from the day's start by the time
// they were recorded, and kept by the time of the report that raised them.
func (h *Handler) vehicleAlarms(ctx context.Context, p fleet.Principal, vehicleID string, day, end time.Time, loc *time.Location, d *vehicleData) error {
	f := fleet.EventFilter{Type: fleet.EventDeviceAlarm, From: day}
	events, _, err := upTo(maxAlarmEvents, func(cursor string) (fleet.List[fleet.Event], error) {
		return h.svc.ListEvents(ctx, p, f, fleet.ListQuery{Cursor: cursor, Limit: fleet.MaxPageLimit})
	})
	if err != nil {
		return err
	}
	for i := len(events) - 1; i >= 0; i-- {
		var a fleet.DeviceAlarm
		if json.Unmarshal(events[i].Data, &a) != nil || a.VehicleID != vehicleID || a.At.Before(day) || a.At.After(end) {
			continue
		}
		if len(d.Alarms) == maxDayAlarms {
			d.MoreAlarms = true
			break
		}
		d.Alarms = append(d.Alarms, alarmRow{At: dayClock(a.At, day, loc), What: alarmText(a.Alarm),
			Where: coords(a.Location.Latitude, a.Location.Longitude)})
	}
	return nil
}

// attributeLines say a point's attributes as the map's popup lists them:
// the vocabulary's in words and units, others by name.
func attributeLines(a fleet.Attributes) []string {
	var out []string
	for _, x := range a {
		out = append(out, attributeLine(x))
	}
	return out
}

func attributeLine(x fleet.Attribute) string {
	n := func(unit string, prec int) string { return strconv.FormatFloat(x.Num, 'f', prec, 64) + unit }
	switch x.Name {
	case fleet.AttrIgnition:
		if x.Num != 0 {
			return "Ignition on"
		}
		return "Ignition off"
	case fleet.AttrAlarm:
		var words []string
		for _, al := range strings.Split(x.Text, ",") {
			words = append(words, alarmText(strings.TrimSpace(al)))
		}
		return "Alarm: " + strings.Join(words, ", ")
	case fleet.AttrPowerV:
		return "Power " + n(" V", 1)
	case "battery_v":
		return "Battery " + n(" V", 2)
	case fleet.AttrFuelLevel:
		return "Fuel " + n(" %", 0)
	case fleet.AttrFuelL:
		return "Fuel " + n(" l", 1)
	case fleet.AttrEngineHours:
		return "Engine " + hours(x.Num)
	case fleet.AttrOdometerKm:
		return "Odometer " + num(int(x.Num)) + " km"
	case fleet.AttrDriverIdentifier:
		return "Driver key " + x.Text
	}
	return x.Name + ": " + attrValue(x)
}

func attrValue(x fleet.Attribute) string {
	switch x.Kind {
	case fleet.AttrBool:
		if x.Num != 0 {
			return "yes"
		}
		return "no"
	case fleet.AttrText:
		return x.Text
	}
	return strconv.FormatFloat(x.Num, 'f', -1, 64)
}
