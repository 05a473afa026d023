// Package gps103 decodes the GPS103 protocol (Coban TK102/TK103 and their many
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
//
// Decoder is its devproto.Decoder, which the listeners of fleetdevice
// serve (fleetdevice.Protocols). Commands to devices go the other way:
// Encoder (encode.go) turns a command into the sentence the device reads,
// and the Decoder reads the device's acknowledging report (`jt`, `kt`)
// as the command's result.
package gps103

import (
	"regexp"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Decoder decodes the gps103 protocol's frames (TCP).
// It holds no state: the zero value is ready, and one serves every
// connection.
type Decoder struct{}

func (Decoder) Name() string  { return "gps103" }
func (Decoder) MaxFrame() int { return 2048 }

// gps103Start reports whether c can start a frame: `imei:`, the `##`
// handshake, or a heartbeat's IMEI.
func gps103Start(c byte) bool { return c == 'i' || c == '#' || c >= '0' && c <= '9' }

func gps103End(c byte) bool { return c == ';' || c == '*' || c == '\n' }

// Split finds a frame: up to and including `;`, `*` or LF.
func (g Decoder) Split(buf []byte) (int, error) {
	return devproto.SplitText(buf, g.MaxFrame(), gps103Start, gps103End)
}

// Decode decodes one frame, with or without its terminator.
func (g Decoder) Decode(frame []byte, s *devproto.Session, m *devproto.Message) error {
	frame = frame[devproto.LeadingCRLF(frame):]
	for len(frame) > 0 && (frame[len(frame)-1] == '\r' || frame[len(frame)-1] == '\n') {
		frame = frame[:len(frame)-1]
	}
	if len(frame) == 0 || len(frame) > g.MaxFrame() || !gps103Start(frame[0]) || devproto.HasTextControl(frame) {
		return devproto.ErrGarbage
	}
	sentence := string(frame)
	m.Kind = devproto.KindOther

	// The handshake: Traccar's test is any sentence of at most 30
	// characters, its terminator counted, that names an IMEI.
	length := len(sentence)
	if end := sentence[len(sentence)-1]; end != ';' && end != '*' {
		length++
	}
	if length <= 30 && strings.Contains(sentence, "imei:") {
		m.Reply = append(m.Reply, "LOAD"...)
		if f, ok := devproto.MatchGroups(gps103Handshake, sentence); ok && devproto.IdentifierOK(f.Group(1)) {
			m.Kind = devproto.KindLogin
			m.Identifier = f.Group(1)
			s.Identifier = m.Identifier
		}
		return nil
	}

	if c := sentence[0]; c >= '0' && c <= '9' {
		m.Reply = append(m.Reply, "ON"...)
		start := strings.Index(sentence, "imei:")
		if start < 0 {
			m.Kind = devproto.KindHeartbeat
			if id := strings.TrimRight(sentence, ";*"); devproto.IdentifierOK(id) && devproto.AllDigits(id) {
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
		if f, ok := devproto.MatchGroups(gps103OBD, sentence); ok && devproto.IdentifierOK(f.Group(1)) {
			m.Identifier = f.Group(1)
		}
	case strings.HasSuffix(sentence, "*"):
		gps103Alternative(sentence, m)
	default:
		gps103Regular(sentence, m)
	}
	return nil
}

var gps103Handshake = regexp.MustCompile(`imei:(\d+),`)

var gps103Pattern = devproto.NewPattern().
	Text("imei:").
	Number("(d+),").        // imei
	Expression("([^,]*),"). // alarm
	GroupBegin().
	Number("(dd)/?(dd)/?(dd) ?"). // local date (yymmdd)
	Number("(dd):?(dd)(?:dd)?,"). // local time (hhmmss)
	Or().
	Number("d*,").
	GroupEnd("").
	Expression("([^,]+)?,"). // rfid
	GroupBegin().
	Text("L,").
	GroupBegin().
	Text(",,").
	Number("(x+),,").  // lac
	Number("(x+),,,"). // cid
	GroupEnd("?").
	Or().
	Text("F,").
	GroupBegin().
	Number("(dd)(dd)(dd)(?:.d+)?"). // time utc (hhmmss)
	Or().
	Number("(?:d{1,5}.d+)?").
	GroupEnd("").
	Text(",").
	Expression("([AV]),"). // validity
	Expression("([NS]),").Optional(1).
	Number("(d+)(dd.d+),"). // latitude (ddmm.mmmm)
	Expression("([NS]),").Optional(1).
	Expression("([EW]),").Optional(1).
	Number("(d+)(dd.d+),"). // longitude (dddmm.mmmm)
	Expression("([EW])?,").Optional(1).
	Number("(d+.?d*)?").Optional(1).    // speed
	Number(",(d+.?d*)?").Optional(1).   // course
	Number(",(-?d+.?d*)?").Optional(1). // altitude
	Number(",([01])?").Optional(1).     // ignition
	Number(",([01])?").Optional(1).     // door
	GroupBegin().
	Number(",(?:(d+.d+)%)?").    // fuel 1
	Number(",(?:(d+.d+)%|d+)?"). // fuel 2
	GroupEnd("?").
	Number(",([-+]?d+)?").Optional(1). // temperature
	GroupEnd("").
	Any().
	Whole()

// gps103Alarm is the common alarm word an event names, as Traccar reads
// them (Gps103ProtocolDecoder.java:139-160 at 9e5c458ad0bf), "" for none.
// Traccar's words without a common one give none: "stockade" (geofence),
// "bonnet alarm", "footbrake alarm", "DTC" (fault) and the "oil" events
// (fuel leak); the event itself stays in "event", verbatim.
func gps103Alarm(event string) string {
	if strings.HasPrefix(event, "T:") {
		return devproto.AlarmTemperature
	}
	switch event {
	case "help me":
		return devproto.AlarmSOS
	case "low battery":
		return devproto.AlarmLowBattery
	case "move":
		return devproto.AlarmMovement
	case "speed":
		return devproto.AlarmOverspeed
	case "door alarm":
		return devproto.AlarmDoor
	case "ac alarm":
		return devproto.AlarmPowerCut
	case "accident alarm":
		return devproto.AlarmAccident
	case "sensor alarm":
		return devproto.AlarmVibration
	}
	return ""
}

// gps103Regular decodes a report.
func gps103Regular(sentence string, m *devproto.Message) {
	f, ok := devproto.MatchGroups(gps103Pattern, sentence)
	if !ok {
		return
	}
	imei := f.Next()
	if !devproto.IdentifierOK(imei) {
		return
	}
	m.Identifier = imei
	alarm := f.Next()
	if gps103Answer(alarm) {
		m.CommandResult, m.HasResult = alarm, true
	}
	if alarm == "help me" {
		m.Reply = append(m.Reply, "**,imei:"...)
		m.Reply = append(m.Reply, imei...)
		m.Reply = append(m.Reply, ",E;"...)
	}

	year, month, day := f.NextInt(0), f.NextInt(0), f.NextInt(0)
	localHours, localMinutes := f.NextInt(0), f.NextInt(0)
	rfid := f.Next()
	if f.HasNext(2) {
		f.Skip(2) // lac, cid
	}
	if !f.HasNextAny(20) {
		return // cell towers only: no coordinates
	}
	p := devproto.NextPosition(m)
	gps103Event(p, alarm)
	if alarm == "rfid" && rfid != "" {
		devproto.SetStr(p, devproto.AttrDriverIdentifier, rfid)
	}

	utcHours, utcMinutes := f.Next(), f.Next()
	t, ok := devproto.CivilTime(year, month, day, localHours, localMinutes, f.NextInt(0))
	if utcHours != "" && utcMinutes != "" {
		uh, _ := devproto.JavaInt(utcHours)
		um, _ := devproto.JavaInt(utcMinutes)
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
	p.Valid = f.Next() == "A" && ok
	if !ok {
		p.Time = time.Time{} // a time that cannot exist: no fix, at no time
	}
	p.Latitude = f.NextCoordinateHem()
	p.Longitude = f.NextCoordinateHem()
	p.Speed, p.HasSpeed = f.NextFloat(0)*devproto.KnotsToKmh, true
	p.Heading, p.HasHeading = f.NextFloat(0), true
	p.Altitude, p.HasAltitude = f.NextFloat(0), true
	if f.HasNext(1) {
		devproto.SetBool(p, devproto.AttrIgnition, f.Next() == "1")
	}
	if f.HasNext(1) {
		devproto.SetBool(p, "door", f.Next() == "1")
	}
	// Two fuel percentages whose tanks or sensors depend on the
	// installation: kept by Traccar's names.
	if v, ok := f.NextFloatOK(); ok {
		devproto.SetNum(p, "fuel1", v)
	}
	if v, ok := f.NextFloatOK(); ok {
		devproto.SetNum(p, "fuel2", v)
	}
	if v, ok := f.NextIntOK(); ok {
		devproto.SetNum(p, devproto.AttrTempC[0], float64(v))
	}

	if f.Bad || !devproto.Usable(p) {
		devproto.DropPosition(m)
		return
	}
	m.Kind = devproto.KindPositions
}

// gps103Event sets what a report's event says: the event itself,
// verbatim ("tracker", "help me", "acc on", "001"...), an alarm, the
// ignition, a temperature or a fuel value (Gps103ProtocolDecoder.java:
// 178-197; Traccar keeps "event" only when it raises no alarm).
func gps103Event(p *devproto.Position, event string) {
	devproto.SetStr(p, devproto.AttrEvent, event)
	if alarm := gps103Alarm(event); alarm != "" {
		devproto.SetStr(p, devproto.AttrAlarm, alarm)
	}
	switch {
	case event == "acc on":
		devproto.SetBool(p, devproto.AttrIgnition, true)
	case event == "acc off":
		devproto.SetBool(p, devproto.AttrIgnition, false)
	case strings.HasPrefix(event, "T:"):
		if v, ok := devproto.JavaDouble(event[2:]); ok {
			devproto.SetNum(p, devproto.AttrTempC[0], v)
		}
	case strings.HasPrefix(event, "oil "):
		// A fuel value in a unit Traccar does not say: kept as "fuel".
		if v, ok := devproto.JavaDouble(event[4:]); ok {
			devproto.SetNum(p, "fuel", v)
		}
	}
}

var gps103OBD = devproto.NewPattern().
	Text("imei:").
	Number("(d+),"). // imei
	Expression("OBD,").
	Any().
	Whole()

var gps103PatternAlt = devproto.NewPattern().
	Text("imei:").
	Number("(d+),"). // imei
	Expression("[^,]+,").
	Expression("(?:-+|(.+)),"). // event
	Expression("(?:-+|(.+)),"). // sensor id
	Expression("(?:-+|(.+)),"). // sensor voltage
	Number("(dd)(dd)(dd),").    // time (hhmmss)
	Number("(dd)(dd)(dd),").    // date (ddmmyy)
	Number("(d+),").            // rssi
	Number("(d),").             // gps status
	Number("(-?d+.d+),").       // latitude
	Number("(-?d+.d+),").       // longitude
	Number("(d+),").            // speed
	Number("(d+),").            // course
	Number("(-?d+),").          // altitude
	Number("(d+.d+),").         // hdop
	Number("(d+),").            // satellites
	Number("([01]),").          // ignition
	Number("([01]),").          // charge
	Expression("(?:-+|(.+))").  // error
	Any().
	Whole()

// gps103Alternative decodes the alternative report (decimal degrees,
// speed in km/h, ended by `*`).
func gps103Alternative(sentence string, m *devproto.Message) {
	f, ok := devproto.MatchGroups(gps103PatternAlt, sentence)
	if !ok {
		return
	}
	imei := f.Next()
	if !devproto.IdentifierOK(imei) {
		return
	}
	m.Identifier = imei
	p := devproto.NextPosition(m)
	if event := f.Next(); event != "" {
		devproto.SetStr(p, devproto.AttrEvent, event)
	}
	if id := f.Next(); id != "" {
		devproto.SetStr(p, "sensor_id", id)
	}
	if v, ok := f.NextFloatOK(); ok {
		devproto.SetNum(p, "sensor_voltage", v)
	}
	hour, minute, second := f.NextInt(0), f.NextInt(0), f.NextInt(0)
	day, month, year := f.NextInt(0), f.NextInt(0), f.NextInt(0)
	devproto.SetNum(p, devproto.AttrRSSI, float64(f.NextInt(0)))
	p.Valid = f.NextInt(0) > 0
	devproto.SetCivilTime(p, year, month, day, hour, minute, second)
	p.Latitude = f.NextFloat(0)
	p.Longitude = f.NextFloat(0)
	p.Speed, p.HasSpeed = float64(f.NextInt(0)), true
	p.Heading, p.HasHeading = float64(f.NextInt(0)), true
	p.Altitude, p.HasAltitude = float64(f.NextInt(0)), true
	devproto.SetNum(p, devproto.AttrHDOP, f.NextFloat(0))
	p.Satellites, p.HasSatellites = f.NextInt(0), true
	devproto.SetBool(p, devproto.AttrIgnition, f.NextInt(0) > 0)
	devproto.SetBool(p, devproto.AttrCharging, f.NextInt(0) > 0)
	if e := f.Next(); e != "" {
		devproto.SetStr(p, "error", e)
	}
	if f.Bad || !devproto.Usable(p) {
		devproto.DropPosition(m)
		return
	}
	m.Kind = devproto.KindPositions
}
