package devproto

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The common vocabulary of attributes (API.md §14). Every decoder names
// what it reads with these names, in these units, whatever the protocol;
// a value with no common name keeps a protocol name (Teltonika's "io" and
// the element's id, the others as Traccar names them, in snake_case).
// docs/telematics.md has each protocol's table.
//
// The names are constants, so that naming an attribute allocates nothing.
const (
	AttrIgnition         = "ignition"          // bool: ignition (ACC) on
	AttrMotion           = "motion"            // bool: the device senses movement
	AttrAlarm            = "alarm"             // string: alarm words, comma-separated
	AttrPowerV           = "power_v"           // external (vehicle) power, V
	AttrBatteryV         = "battery_v"         // the device's battery, V
	AttrBatteryLevel     = "battery_level"     // the device's battery, % 0–100
	AttrCharging         = "charging"          // bool: the battery is charging
	AttrOdometerKm       = "odometer_km"       // total distance, km
	AttrTripOdometerKm   = "trip_odometer_km"  // the device's trip counter, km
	AttrEngineHours      = "engine_hours"      // total engine hours
	AttrFuelLevel        = "fuel_level"        // fuel in the tank, %
	AttrFuelL            = "fuel_l"            // fuel in the tank, l
	AttrFuelUsedL        = "fuel_used_l"       // fuel used in total, l
	AttrRPM              = "rpm"               // engine revolutions per minute
	AttrOBDSpeedKmh      = "obd_speed_kmh"     // speed the vehicle's bus reports, km/h
	AttrCoolantTempC     = "coolant_temp_c"    // engine coolant, °C
	AttrDriverIdentifier = "driver_identifier" // string: the driver's key (hex for binary keys)
	AttrRSSI             = "rssi"              // mobile signal as the device reports it
	AttrHDOP             = "hdop"              // horizontal dilution of precision
	AttrPDOP             = "pdop"              // position dilution of precision
	AttrAccuracyM        = "accuracy_m"        // horizontal accuracy, m
	AttrEvent            = "event"             // string: the protocol's own event code, verbatim
)

// The numbered names of the vocabulary, by number (index 0 is the first).
var (
	AttrTempC = [4]string{"temp1_c", "temp2_c", "temp3_c", "temp4_c"}
	AttrDin   = [4]string{"din1", "din2", "din3", "din4"}
	AttrDout  = [4]string{"dout1", "dout2", "dout3", "dout4"}
	AttrAin   = [4]string{"ain1", "ain2", "ain3", "ain4"}
)

// The alarm words of the vocabulary: the value of AttrAlarm.
const (
	AlarmSOS              = "sos"
	AlarmPowerCut         = "power_cut"
	AlarmPowerRestored    = "power_restored"
	AlarmLowPower         = "low_power"
	AlarmLowBattery       = "low_battery"
	AlarmVibration        = "vibration"
	AlarmMovement         = "movement"
	AlarmOverspeed        = "overspeed"
	AlarmTow              = "tow"
	AlarmTampering        = "tampering"
	AlarmJamming          = "jamming"
	AlarmDoor             = "door"
	AlarmHardAcceleration = "hard_acceleration"
	AlarmHardBraking      = "hard_braking"
	AlarmHardCornering    = "hard_cornering"
	AlarmAccident         = "accident"
	AlarmFallDown         = "fall_down"
	AlarmFatigueDriving   = "fatigue_driving"
	AlarmTemperature      = "temperature"
	AlarmGeofenceEnter    = "geofence_enter"
	AlarmGeofenceExit     = "geofence_exit"
	AlarmGeneral          = "general"
)

// Bounds of an attribute the API accepts (API.md §14).
const (
	AttrMaxName = 32
	AttrMaxText = 64
)

// AppendAttr is append(attrs, a). Go's append of a struct that holds
// strings copies it through a temporary, several times the cost of
// storing it in place; a decoder adds hundreds a frame.
func AppendAttr(attrs []Attribute, a Attribute) []Attribute {
	n := len(attrs)
	if n == cap(attrs) {
		return append(attrs, a)
	}
	attrs = attrs[:n+1]
	attrs[n] = a
	return attrs
}

// AttrNameOK reports whether s is a name the API accepts:
// ^[a-z][a-z0-9_]{0,31}$.
func AttrNameOK(s string) bool {
	if len(s) == 0 || len(s) > AttrMaxName || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// AttrTextOK reports whether s is a text value the API accepts: at most 64
// bytes of UTF-8 without control characters. A decoder leaves out a value
// that is not (a device cannot be told; a cut value would be wrong).
func AttrTextOK(s string) bool {
	if len(s) > AttrMaxText || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// AlarmJoin adds word to the comma-separated alarms of have, once; a word
// that would take the value past 64 bytes is left out (no device raises
// that many alarms in one report; the first ones are kept).
func AlarmJoin(have, word string) string {
	if have == "" {
		return word
	}
	for rest := have; rest != ""; {
		var item string
		item, rest, _ = strings.Cut(rest, ",")
		if item == word {
			return have
		}
	}
	if len(have)+1+len(word) > AttrMaxText {
		return have
	}
	return have + "," + word
}

// SnakeCase is name in the vocabulary's form: camelCase and other
// separators become "_", letters lower-case ("batteryLevel" →
// "battery_level", "Fuel-Rate" → "fuel_rate"). ok is false when the
// result is not a name the API accepts (it does not start with a letter,
// is longer than 32 bytes, or had characters outside ASCII).
func SnakeCase(name string) (string, bool) {
	if AttrNameOK(name) {
		return name, true
	}
	var b strings.Builder
	b.Grow(len(name) + 4)
	under := false // an "_" is pending
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			prevLower := i > 0 && (name[i-1] >= 'a' && name[i-1] <= 'z' || name[i-1] >= '0' && name[i-1] <= '9')
			nextLower := i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
			prevUpper := i > 0 && name[i-1] >= 'A' && name[i-1] <= 'Z'
			if prevLower || prevUpper && nextLower {
				under = true
			}
			c += 'a' - 'A'
			fallthrough
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteByte(c)
		case c < utf8.RuneSelf:
			under = true
		default:
			return "", false
		}
	}
	s := b.String()
	return s, AttrNameOK(s)
}

// codeStrings holds the decimal strings of the event codes most protocols
// send (0 to 1023), so that naming a record's event allocates nothing.
var codeStrings = func() (t [1024]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// CodeString is n in decimal.
func CodeString(n int) string {
	if n >= 0 && n < len(codeStrings) {
		return codeStrings[n]
	}
	return strconv.Itoa(n)
}

// strCache remembers the last strings a connection's messages made (a
// driver's key, a SIM's number, repeated in every record), so that the
// same again costs no allocation. The strings are immutable: handing them
// on is safe.
type strCache struct {
	s    [4]string
	next uint8
	n    [4]numString
	nn   uint8
}

// numString is a string made of a number in a format.
type numString struct {
	v      uint64
	format byte
	s      string
}

// get returns b as a string, one remembered when it is the same.
func (c *strCache) get(b []byte) string {
	for _, s := range c.s {
		if s == string(b) && s != "" {
			return s
		}
	}
	s := string(b)
	c.s[c.next%uint8(len(c.s))] = s
	c.next++
	return s
}

// number returns the text of v in format (a letter naming it), one
// remembered when it is the same, else the one write appends to a
// buffer.
func (c *strCache) number(v uint64, format byte, write func([]byte) []byte) string {
	for i := range c.n {
		if n := &c.n[i]; n.format == format && n.v == v && n.s != "" {
			return n.s
		}
	}
	var buf [24]byte
	s := string(write(buf[:0]))
	c.n[c.nn%uint8(len(c.n))] = numString{v, format, s}
	c.nn++
	return s
}

// TraccarAlarm is the vocabulary's word for an alarm word as Traccar's
// Position names it (what OsmAnd senders, Traccar Client included, send):
// "powerCut" → "power_cut"; a word of the vocabulary is itself. ok is
// false for a word with no common name (Traccar's geofence, removing,
// powerOff, fuelLeak...).
func TraccarAlarm(word string) (string, bool) {
	switch word {
	case "sos", "vibration", "movement", "overspeed", "tow", "tampering", "jamming", "door",
		"accident", "temperature", "general":
		return word, true
	case "powerCut", "power_cut":
		return AlarmPowerCut, true
	case "powerRestored", "power_restored":
		return AlarmPowerRestored, true
	case "lowPower", "low_power":
		return AlarmLowPower, true
	case "lowBattery", "low_battery":
		return AlarmLowBattery, true
	case "hardAcceleration", "hard_acceleration":
		return AlarmHardAcceleration, true
	case "hardBraking", "hard_braking":
		return AlarmHardBraking, true
	case "hardCornering", "hard_cornering":
		return AlarmHardCornering, true
	case "fallDown", "fall_down":
		return AlarmFallDown, true
	case "fatigueDriving", "fatigue_driving":
		return AlarmFatigueDriving, true
	case "geofenceEnter", "geofence_enter":
		return AlarmGeofenceEnter, true
	case "geofenceExit", "geofence_exit":
		return AlarmGeofenceExit, true
	}
	return "", false
}

// VocabKind is the type the vocabulary gives name, ok false for a name
// outside it. A value that a sender names with the vocabulary's name must
// have its type (OsmAnd's free parameters).
func VocabKind(name string) (AttrKind, bool) {
	switch name {
	case AttrIgnition, AttrMotion, AttrCharging,
		"din1", "din2", "din3", "din4", "dout1", "dout2", "dout3", "dout4":
		return AttrBool, true
	case AttrAlarm, AttrDriverIdentifier, AttrEvent:
		return AttrString, true
	case AttrPowerV, AttrBatteryV, AttrBatteryLevel, AttrOdometerKm, AttrTripOdometerKm,
		AttrEngineHours, AttrFuelLevel, AttrFuelL, AttrFuelUsedL, AttrRPM, AttrOBDSpeedKmh,
		AttrCoolantTempC, "temp1_c", "temp2_c", "temp3_c", "temp4_c",
		"ain1", "ain2", "ain3", "ain4", AttrRSSI, AttrHDOP, AttrPDOP, AttrAccuracyM:
		return AttrNumber, true
	}
	return 0, false
}
