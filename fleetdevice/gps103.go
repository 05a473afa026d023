package fleetdevice

import (
	"regexp"
	"strings"
	"time"
)

// gps103 decodes the GPS103 protocol (Coban TK102/TK103 and their many
// copies): `;`-terminated text over TCP. It follows Traccar's
// Gps103ProtocolDecoder (frames end at `;`, `*` or a line end).
//
//   - `##,imei:<imei>,A;` (any short sentence naming an IMEI) is the
//     handshake: KindLogin, answered `LOAD`.
//   - `<imei>;` is a heartbeat, answered `ON`.
//   - `imei:<imei>,<event>,<yymmddHHMM local>,<rfid>,F,<hhmmss.sss UTC>,A,
//     DDMM.mmmm,N,DDDMM.mmmm,E,<speed knots>,<course>[,<altitude>,...];` is
//     a report. Its time is the local date and time corrected by the
//     device's offset from UTC, which the two clocks give: local HH:MM
//     against UTC hh:mm, within ±12 hours. An SOS (`help me`) is answered
//     `**,imei:<imei>,E;` so that the device stops repeating it.
//   - `imei:...,L,...;` (a report of cell towers only), OBD data and photo
//     packets carry no coordinates, and no position.
//   - `imei:<imei>,<name>,...,hhmmss,ddmmyy,rssi,fix,lat,lon,speed km/h,
//     ...,*` is the alternative report of some firmware, in decimal degrees.
type gps103 struct{}

// GPS103 returns the gps103 protocol's decoder.
func GPS103() Protocol { return gps103{} }

func (gps103) Name() string  { return "gps103" }
func (gps103) Port() int     { return 5001 }
func (gps103) UDP() bool     { return false }
func (gps103) MaxFrame() int { return 2048 }

// gps103Start reports whether c can start a frame: `imei:`, the `##`
// handshake, or a heartbeat's IMEI.
func gps103Start(c byte) bool { return c == 'i' || c == '#' || c >= '0' && c <= '9' }

func gps103End(c byte) bool { return c == ';' || c == '*' || c == '\n' }

// Split finds a frame: up to and including `;`, `*` or LF.
func (g gps103) Split(buf []byte) (int, error) {
	return splitText(buf, g.MaxFrame(), gps103Start, gps103End)
}

// Decode decodes one frame, with or without its terminator.
func (g gps103) Decode(frame []byte, s *Session, m *Message) error {
	frame = frame[leadingCRLF(frame):]
	for len(frame) > 0 && (frame[len(frame)-1] == '\r' || frame[len(frame)-1] == '\n') {
		frame = frame[:len(frame)-1]
	}
	if len(frame) == 0 || len(frame) > g.MaxFrame() || !gps103Start(frame[0]) || hasTextControl(frame) {
		return ErrGarbage
	}
	sentence := string(frame)
	m.Kind = KindOther

	// The handshake: Traccar's test is any sentence of at most 30
	// characters, its terminator counted, that names an IMEI.
	length := len(sentence)
	if end := sentence[len(sentence)-1]; end != ';' && end != '*' {
		length++
	}
	if length <= 30 && strings.Contains(sentence, "imei:") {
		m.Reply = append(m.Reply, "LOAD"...)
		if f, ok := matchGroups(gps103Handshake, sentence); ok && identifierOK(f.group(1)) {
			m.Kind = KindLogin
			m.Identifier = f.group(1)
			s.Identifier = m.Identifier
		}
		return nil
	}

	if c := sentence[0]; c >= '0' && c <= '9' {
		m.Reply = append(m.Reply, "ON"...)
		start := strings.Index(sentence, "imei:")
		if start < 0 {
			m.Kind = KindHeartbeat
			if id := strings.TrimRight(sentence, ";*"); identifierOK(id) && allDigits(id) {
				m.Identifier = id
			}
			return nil
		}
		sentence = sentence[start:]
	}

	switch {
	case strings.HasPrefix(sentence[min(21, len(sentence)):], "vr"):
		// A photo packet.
	case len(sentence) >= 24 && strings.Contains(sentence[21:24], "OBD"):
		// OBD data: no coordinates.
		if f, ok := matchGroups(gps103OBD, sentence); ok && identifierOK(f.group(1)) {
			m.Identifier = f.group(1)
		}
	case strings.HasSuffix(sentence, "*"):
		gps103Alternative(sentence, m)
	default:
		gps103Regular(sentence, m)
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var gps103Handshake = regexp.MustCompile(`imei:(\d+),`)

var gps103Pattern = newPattern().
	text("imei:").
	number("(d+),").        // imei
	expression("([^,]*),"). // alarm
	groupBegin().
	number("(dd)/?(dd)/?(dd) ?"). // local date (yymmdd)
	number("(dd):?(dd)(?:dd)?,"). // local time (hhmmss)
	or().
	number("d*,").
	groupEnd("").
	expression("([^,]+)?,"). // rfid
	groupBegin().
	text("L,").
	groupBegin().
	text(",,").
	number("(x+),,").  // lac
	number("(x+),,,"). // cid
	groupEnd("?").
	or().
	text("F,").
	groupBegin().
	number("(dd)(dd)(dd)(?:.d+)?"). // time utc (hhmmss)
	or().
	number("(?:d{1,5}.d+)?").
	groupEnd("").
	text(",").
	expression("([AV]),"). // validity
	expression("([NS]),").optional(1).
	number("(d+)(dd.d+),"). // latitude (ddmm.mmmm)
	expression("([NS]),").optional(1).
	expression("([EW]),").optional(1).
	number("(d+)(dd.d+),"). // longitude (dddmm.mmmm)
	expression("([EW])?,").optional(1).
	number("(d+.?d*)?").optional(1).    // speed
	number(",(d+.?d*)?").optional(1).   // course
	number(",(-?d+.?d*)?").optional(1). // altitude
	number(",([01])?").optional(1).     // ignition
	number(",([01])?").optional(1).     // door
	groupBegin().
	number(",(?:(d+.d+)%)?").    // fuel 1
	number(",(?:(d+.d+)%|d+)?"). // fuel 2
	groupEnd("?").
	number(",([-+]?d+)?").optional(1). // temperature
	groupEnd("").
	any().
	whole()

// gps103Alarm is the common alarm word an event names, as Traccar reads
// them (Gps103ProtocolDecoder.java:139-160 at 9e5c458ad0bf), "" for none.
// Traccar's words without a common one give none: "stockade" (geofence),
// "bonnet alarm", "footbrake alarm", "DTC" (fault) and the "oil" events
// (fuel leak); the event itself stays in "event", verbatim.
func gps103Alarm(event string) string {
	if strings.HasPrefix(event, "T:") {
		return alarmTemperature
	}
	switch event {
	case "help me":
		return alarmSOS
	case "low battery":
		return alarmLowBattery
	case "move":
		return alarmMovement
	case "speed":
		return alarmOverspeed
	case "door alarm":
		return alarmDoor
	case "ac alarm":
		return alarmPowerCut
	case "accident alarm":
		return alarmAccident
	case "sensor alarm":
		return alarmVibration
	}
	return ""
}

// gps103Regular decodes a report.
func gps103Regular(sentence string, m *Message) {
	f, ok := matchGroups(gps103Pattern, sentence)
	if !ok {
		return
	}
	imei := f.next()
	if !identifierOK(imei) {
		return
	}
	m.Identifier = imei
	alarm := f.next()
	if alarm == "help me" {
		m.Reply = append(m.Reply, "**,imei:"...)
		m.Reply = append(m.Reply, imei...)
		m.Reply = append(m.Reply, ",E;"...)
	}

	year, month, day := f.nextInt(0), f.nextInt(0), f.nextInt(0)
	localHours, localMinutes := f.nextInt(0), f.nextInt(0)
	rfid := f.next()
	if f.hasNext(2) {
		f.skip(2) // lac, cid
	}
	if !f.hasNextAny(20) {
		return // cell towers only: no coordinates
	}
	p := takePosition(m)
	gps103Event(p, alarm)
	if alarm == "rfid" && rfid != "" {
		setStr(p, attrDriverIdentifier, rfid)
	}

	utcHours, utcMinutes := f.next(), f.next()
	t, ok := civilTime(year, month, day, localHours, localMinutes, f.nextInt(0))
	if utcHours != "" && utcMinutes != "" {
		uh, _ := javaInt(utcHours)
		um, _ := javaInt(utcMinutes)
		ok = ok && uh <= 23 && um <= 59
		delta := (localHours-uh)*60 + localMinutes - um
		if delta <= -12*60 {
			delta += 24 * 60
		} else if delta > 12*60 {
			delta -= 24 * 60
		}
		t = t.Add(-time.Duration(delta) * time.Minute)
	}
	p.Time = t
	p.Valid = f.next() == "A" && ok
	if !ok {
		p.Time = time.Time{} // a time that cannot exist: no fix, at no time
	}
	p.Latitude = f.nextCoordinateHem()
	p.Longitude = f.nextCoordinateHem()
	p.Speed, p.HasSpeed = f.nextFloat(0)*knotsToKmh, true
	p.Heading, p.HasHeading = f.nextFloat(0), true
	p.Altitude, p.HasAltitude = f.nextFloat(0), true
	if f.hasNext(1) {
		setBool(p, attrIgnition, f.next() == "1")
	}
	if f.hasNext(1) {
		setBool(p, "door", f.next() == "1")
	}
	// Two fuel percentages whose tanks or sensors depend on the
	// installation: kept by Traccar's names.
	if v, ok := f.nextFloatOK(); ok {
		setNum(p, "fuel1", v)
	}
	if v, ok := f.nextFloatOK(); ok {
		setNum(p, "fuel2", v)
	}
	if v, ok := f.nextIntOK(); ok {
		setNum(p, attrTempC[0], float64(v))
	}

	if f.bad || !usable(p) {
		dropPosition(m)
		return
	}
	m.Kind = KindPositions
}

// gps103Event sets what a report's event says: the event itself,
// verbatim ("tracker", "help me", "acc on", "001"...), an alarm, the
// ignition, a temperature or a fuel value (Gps103ProtocolDecoder.java:
// 178-197; Traccar keeps "event" only when it raises no alarm).
func gps103Event(p *Position, event string) {
	setStr(p, attrEvent, event)
	if alarm := gps103Alarm(event); alarm != "" {
		setStr(p, attrAlarm, alarm)
	}
	switch {
	case event == "acc on":
		setBool(p, attrIgnition, true)
	case event == "acc off":
		setBool(p, attrIgnition, false)
	case strings.HasPrefix(event, "T:"):
		if v, ok := javaDouble(event[2:]); ok {
			setNum(p, attrTempC[0], v)
		}
	case strings.HasPrefix(event, "oil "):
		// A fuel value in a unit Traccar does not say: kept as "fuel".
		if v, ok := javaDouble(event[4:]); ok {
			setNum(p, "fuel", v)
		}
	}
}

var gps103OBD = newPattern().
	text("imei:").
	number("(d+),"). // imei
	expression("OBD,").
	any().
	whole()

var gps103PatternAlt = newPattern().
	text("imei:").
	number("(d+),"). // imei
	expression("[^,]+,").
	expression("(?:-+|(.+)),"). // event
	expression("(?:-+|(.+)),"). // sensor id
	expression("(?:-+|(.+)),"). // sensor voltage
	number("(dd)(dd)(dd),").    // time (hhmmss)
	number("(dd)(dd)(dd),").    // date (ddmmyy)
	number("(d+),").            // rssi
	number("(d),").             // gps status
	number("(-?d+.d+),").       // latitude
	number("(-?d+.d+),").       // longitude
	number("(d+),").            // speed
	number("(d+),").            // course
	number("(-?d+),").          // altitude
	number("(d+.d+),").         // hdop
	number("(d+),").            // satellites
	number("([01]),").          // ignition
	number("([01]),").          // charge
	expression("(?:-+|(.+))").  // error
	any().
	whole()

// gps103Alternative decodes the alternative report (decimal degrees,
// speed in km/h, ended by `*`).
func gps103Alternative(sentence string, m *Message) {
	f, ok := matchGroups(gps103PatternAlt, sentence)
	if !ok {
		return
	}
	imei := f.next()
	if !identifierOK(imei) {
		return
	}
	m.Identifier = imei
	p := takePosition(m)
	if event := f.next(); event != "" {
		setStr(p, attrEvent, event)
	}
	if id := f.next(); id != "" {
		setStr(p, "sensor_id", id)
	}
	if v, ok := f.nextFloatOK(); ok {
		setNum(p, "sensor_voltage", v)
	}
	hour, minute, second := f.nextInt(0), f.nextInt(0), f.nextInt(0)
	day, month, year := f.nextInt(0), f.nextInt(0), f.nextInt(0)
	setNum(p, attrRSSI, float64(f.nextInt(0)))
	p.Valid = f.nextInt(0) > 0
	setCivilTime(p, year, month, day, hour, minute, second)
	p.Latitude = f.nextFloat(0)
	p.Longitude = f.nextFloat(0)
	p.Speed, p.HasSpeed = float64(f.nextInt(0)), true
	p.Heading, p.HasHeading = float64(f.nextInt(0)), true
	p.Altitude, p.HasAltitude = float64(f.nextInt(0)), true
	setNum(p, attrHDOP, f.nextFloat(0))
	p.Satellites, p.HasSatellites = f.nextInt(0), true
	setBool(p, attrIgnition, f.nextInt(0) > 0)
	setBool(p, attrCharging, f.nextInt(0) > 0)
	if e := f.next(); e != "" {
		setStr(p, "error", e)
	}
	if f.bad || !usable(p) {
		dropPosition(m)
		return
	}
	m.Kind = KindPositions
}
