package fleetdevice

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
	attrIgnition         = "ignition"          // bool: ignition (ACC) on
	attrMotion           = "motion"            // bool: the device senses movement
	attrAlarm            = "alarm"             // string: alarm words, comma-separated
	attrPowerV           = "power_v"           // external (vehicle) power, V
	attrBatteryV         = "battery_v"         // the device's battery, V
	attrBatteryLevel     = "battery_level"     // the device's battery, % 0–100
	attrCharging         = "charging"          // bool: the battery is charging
	attrOdometerKm       = "odometer_km"       // total distance, km
	attrTripOdometerKm   = "trip_odometer_km"  // the device's trip counter, km
	attrEngineHours      = "engine_hours"      // total engine hours
	attrFuelLevel        = "fuel_level"        // fuel in the tank, %
	attrFuelL            = "fuel_l"            // fuel in the tank, l
	attrFuelUsedL        = "fuel_used_l"       // fuel used in total, l
	attrRPM              = "rpm"               // engine revolutions per minute
	attrOBDSpeedKmh      = "obd_speed_kmh"     // speed the vehicle's bus reports, km/h
	attrCoolantTempC     = "coolant_temp_c"    // engine coolant, °C
	attrDriverIdentifier = "driver_identifier" // string: the driver's key (hex for binary keys)
	attrRSSI             = "rssi"              // mobile signal as the device reports it
	attrHDOP             = "hdop"              // horizontal dilution of precision
	attrPDOP             = "pdop"              // position dilution of precision
	attrAccuracyM        = "accuracy_m"        // horizontal accuracy, m
	attrEvent            = "event"             // string: the protocol's own event code, verbatim
)

// The numbered names of the vocabulary, by number (index 0 is the first).
var (
	attrTempC = [4]string{"temp1_c", "temp2_c", "temp3_c", "temp4_c"}
	attrDin   = [4]string{"din1", "din2", "din3", "din4"}
	attrDout  = [4]string{"dout1", "dout2", "dout3", "dout4"}
	attrAin   = [4]string{"ain1", "ain2", "ain3", "ain4"}
)

// The alarm words of the vocabulary: the value of attrAlarm.
const (
	alarmSOS              = "sos"
	alarmPowerCut         = "power_cut"
	alarmPowerRestored    = "power_restored"
	alarmLowPower         = "low_power"
	alarmLowBattery       = "low_battery"
	alarmVibration        = "vibration"
	alarmMovement         = "movement"
	alarmOverspeed        = "overspeed"
	alarmTow              = "tow"
	alarmTampering        = "tampering"
	alarmJamming          = "jamming"
	alarmDoor             = "door"
	alarmHardAcceleration = "hard_acceleration"
	alarmHardBraking      = "hard_braking"
	alarmHardCornering    = "hard_cornering"
	alarmAccident         = "accident"
	alarmFallDown         = "fall_down"
	alarmFatigueDriving   = "fatigue_driving"
	alarmTemperature      = "temperature"
	alarmGeofenceEnter    = "geofence_enter"
	alarmGeofenceExit     = "geofence_exit"
	alarmGeneral          = "general"
)

// Bounds of an attribute the API accepts (API.md §14).
const (
	attrMaxName = 32
	attrMaxText = 64
)

// attrAppend is append(attrs, a). Go's append of a struct that holds
// strings copies it through a temporary, several times the cost of
// storing it in place; a decoder adds hundreds a frame.
func attrAppend(attrs []Attribute, a Attribute) []Attribute {
	n := len(attrs)
	if n == cap(attrs) {
		return append(attrs, a)
	}
	attrs = attrs[:n+1]
	attrs[n] = a
	return attrs
}

// attrNameOK reports whether s is a name the API accepts:
// ^[a-z][a-z0-9_]{0,31}$.
func attrNameOK(s string) bool {
	if len(s) == 0 || len(s) > attrMaxName || s[0] < 'a' || s[0] > 'z' {
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

// attrTextOK reports whether s is a text value the API accepts: at most 64
// bytes of UTF-8 without control characters. A decoder leaves out a value
// that is not (a device cannot be told; a cut value would be wrong).
func attrTextOK(s string) bool {
	if len(s) > attrMaxText || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// alarmJoin adds word to the comma-separated alarms of have, once; a word
// that would take the value past 64 bytes is left out (no device raises
// that many alarms in one report; the first ones are kept).
func alarmJoin(have, word string) string {
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
	if len(have)+1+len(word) > attrMaxText {
		return have
	}
	return have + "," + word
}

// snakeCase is name in the vocabulary's form: camelCase and other
// separators become "_", letters lower-case ("batteryLevel" →
// "battery_level", "Fuel-Rate" → "fuel_rate"). ok is false when the
// result is not a name the API accepts (it does not start with a letter,
// is longer than 32 bytes, or had characters outside ASCII).
func snakeCase(name string) (string, bool) {
	if attrNameOK(name) {
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
	return s, attrNameOK(s)
}

// codeStrings holds the decimal strings of the event codes most protocols
// send (0 to 1023), so that naming a record's event allocates nothing.
var codeStrings = func() (t [1024]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// codeString is n in decimal.
func codeString(n int) string {
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

// traccarAlarm is the vocabulary's word for an alarm word as Traccar's
// Position names it (what OsmAnd senders, Traccar Client included, send):
// "powerCut" → "power_cut"; a word of the vocabulary is itself. ok is
// false for a word with no common name (Traccar's geofence, removing,
// powerOff, fuelLeak...).
func traccarAlarm(word string) (string, bool) {
	switch word {
	case "sos", "vibration", "movement", "overspeed", "tow", "tampering", "jamming", "door",
		"accident", "temperature", "general":
		return word, true
	case "powerCut", "power_cut":
		return alarmPowerCut, true
	case "powerRestored", "power_restored":
		return alarmPowerRestored, true
	case "lowPower", "low_power":
		return alarmLowPower, true
	case "lowBattery", "low_battery":
		return alarmLowBattery, true
	case "hardAcceleration", "hard_acceleration":
		return alarmHardAcceleration, true
	case "hardBraking", "hard_braking":
		return alarmHardBraking, true
	case "hardCornering", "hard_cornering":
		return alarmHardCornering, true
	case "fallDown", "fall_down":
		return alarmFallDown, true
	case "fatigueDriving", "fatigue_driving":
		return alarmFatigueDriving, true
	case "geofenceEnter", "geofence_enter":
		return alarmGeofenceEnter, true
	case "geofenceExit", "geofence_exit":
		return alarmGeofenceExit, true
	}
	return "", false
}

// vocabKind is the type the vocabulary gives name, ok false for a name
// outside it. A value that a sender names with the vocabulary's name must
// have its type (OsmAnd's free parameters).
func vocabKind(name string) (AttrKind, bool) {
	switch name {
	case attrIgnition, attrMotion, attrCharging,
		"din1", "din2", "din3", "din4", "dout1", "dout2", "dout3", "dout4":
		return AttrBool, true
	case attrAlarm, attrDriverIdentifier, attrEvent:
		return AttrString, true
	case attrPowerV, attrBatteryV, attrBatteryLevel, attrOdometerKm, attrTripOdometerKm,
		attrEngineHours, attrFuelLevel, attrFuelL, attrFuelUsedL, attrRPM, attrOBDSpeedKmh,
		attrCoolantTempC, "temp1_c", "temp2_c", "temp3_c", "temp4_c",
		"ain1", "ain2", "ain3", "ain4", attrRSSI, attrHDOP, attrPDOP, attrAccuracyM:
		return AttrNumber, true
	}
	return 0, false
}
