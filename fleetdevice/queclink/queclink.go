// Package queclink decodes Queclink's @Track text protocol (GL, GV, GB and GMT
// trackers): `+RESP:GTxxx,...$` reports, `+BUFF:GTxxx,...$` reports the
// device kept while it could not send (the same positions, later), and
// `+ACK:GTxxx,...$` answers, over TCP and UDP. It follows Traccar's
// Gl200FrameDecoder and Gl200TextProtocolDecoder: every report that
// carries coordinates gives a position (GTFRI and its kin may carry
// several), the others (GTINF, GTVER, GTGSM, GTWIF, GTPNA...) none. The
// binary @Track frames (`+RSP`, `+EVT`...) are not read.
//
// The identifier is the report's IMEI. The heartbeat `+ACK:GTHBD` is
// answered `+SACK:GTHBD,<protocol version>,<count>$`; nothing else is
// acknowledged (the other `+ACK`s answer commands). hdop is an attribute; a position is valid when it has
// coordinates, except GTCAN's, which says whether its fix is.
//
// Decoder is its devproto.Decoder, which the listeners of fleetdevice
// serve (fleetdevice.Protocols). Commands to devices go the other way:
// Encoder (encode.go) turns a command into the AT command the device
// reads, and the Decoder reads the device's `+ACK:GTxxx` as the
// command's result, with the serial number it echoes.
package queclink

import (
	"math/bits"
	"regexp"
	"strings"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Decoder decodes the queclink protocol's frames (TCP) and datagrams (UDP).
// It holds no state: the zero value is ready, and one serves every
// connection.
type Decoder struct{}

func (Decoder) Name() string  { return "queclink" }
func (Decoder) MaxFrame() int { return 4096 }

const (
	// glMaxPositions bounds the positions of one report.
	glMaxPositions = 128
)

// glHead reports whether b starts with the head of a text frame (ok:
// `+RESP:`, `+BUFF:` or `+ACK:`), or could still (more).
func glHead(b []byte) (ok, more bool) {
	for _, h := range [...]string{"+RESP:", "+BUFF:", "+ACK:"} {
		n := min(len(b), len(h))
		if string(b[:n]) == h[:n] {
			if n == len(h) {
				return true, false
			}
			more = true
		}
	}
	return false, more
}

// Split finds a frame: `+RESP:`, `+BUFF:` or `+ACK:` up to and including
// `$`.
func (q Decoder) Split(buf []byte) (int, error) {
	i := devproto.LeadingCRLF(buf)
	if i < len(buf) {
		if ok, more := glHead(buf[i:]); !ok {
			if !more || devproto.HasTextControl(buf[i:]) {
				return 0, devproto.ErrGarbage
			}
			return 0, nil // the head is not whole yet
		}
	}
	return devproto.SplitText(buf, q.MaxFrame(), func(c byte) bool { return c == '+' }, func(c byte) bool { return c == '$' })
}

// Decode decodes one frame (or datagram), with or without its `$`.
func (q Decoder) Decode(frame []byte, s *devproto.Session, m *devproto.Message) error {
	frame = devproto.TrimLine(frame)
	if len(frame) == 0 || len(frame) > q.MaxFrame() || devproto.HasTextControl(frame) {
		return devproto.ErrGarbage
	}
	if ok, _ := glHead(frame); !ok {
		return devproto.ErrGarbage
	}
	sentence := strings.TrimSuffix(string(frame), "$")
	m.Kind = devproto.KindOther
	typeIndex := strings.Index(sentence, ":GT")
	if typeIndex < 0 || typeIndex+6 > len(sentence) {
		return nil
	}
	var buf [64]string
	v := devproto.JavaSplit(buf[:0], sentence, ',')
	typ := sentence[typeIndex+3 : typeIndex+6]

	if strings.HasPrefix(sentence, "+ACK") {
		glAck(v, m)
		return nil
	}
	start := len(m.Positions)
	if !glDecodeType(typ, sentence, v, m) {
		glBasic(typ, v, m)
	}
	if len(m.Positions) > start {
		m.Kind = devproto.KindPositions
		// The report's type, verbatim ("GTFRI", "GTIGN"...: Traccar's
		// "type" without its "GT", Gl200TextProtocolDecoder.java:1766-1774).
		event := sentence[typeIndex+1 : typeIndex+6]
		for i := start; i < len(m.Positions); i++ {
			devproto.SetStr(&m.Positions[i], devproto.AttrEvent, event)
		}
	}
	return nil
}

// glAck decodes an answer: the heartbeat's gets its acknowledgement, the
// others answer commands (glCommandAck).
func glAck(v []string, m *devproto.Message) {
	if len(v) < 3 || !devproto.IdentifierOK(v[2]) {
		return
	}
	m.Identifier = v[2]
	if v[0] != "+ACK:GTHBD" {
		glCommandAck(v, m)
	} else {
		m.Kind = devproto.KindHeartbeat
		m.Reply = append(m.Reply, "+SACK:GTHBD,"...)
		m.Reply = append(m.Reply, v[1]...)
		m.Reply = append(m.Reply, ',')
		m.Reply = append(m.Reply, v[len(v)-1]...)
		m.Reply = append(m.Reply, '$')
	}
}

// glDecodeType decodes a report of a type with a decoder of its own; false
// when there is none or it does not recognise the report, and the general
// one (glBasic) is to read it.
func glDecodeType(typ, sentence string, v []string, m *devproto.Message) bool {
	switch typ {
	case "CTN", "FRI", "GEO", "RTL", "DOG", "STR":
		return glDecodeFri(sentence, m)
	case "ERI":
		glEri(v, m)
	case "IGN", "IGF", "VGN", "VGF":
		glIgn(v, typ, m)
	case "CAN":
		glCan(v, m)
	case "DAT":
		glDat(v, m)
	case "OBD":
		return glOneLocation(glObd, sentence, 13, m, nil)
	case "LSW", "TSW":
		return glOneLocation(glLsw, sentence, 3, m, func(p *devproto.Position, f *devproto.Groups) {
			in := devproto.AttrDin[1]
			if strings.Contains(sentence, "LSW") {
				in = devproto.AttrDin[0]
			}
			devproto.SetBool(p, in, f.Group(2) == "1")
		})
	case "IDA":
		return glOneLocation(glIda, sentence, 3, m, func(p *devproto.Position, f *devproto.Groups) {
			devproto.SetStr(p, devproto.AttrDriverIdentifier, f.Group(2))
		})
	case "DAR":
		return glOneLocation(glDar, sentence, 4, m, nil)
	case "BAA":
		return glOneLocation(glBaa, sentence, 4, m, nil)
	case "BID":
		return glOneLocation(glBid, sentence, 4, m, nil)
	case "LSA":
		return glOneLocation(glLsa, sentence, 2, m, nil)
	case "VER":
		return glNoLocation(glVer, sentence, m)
	case "WIF":
		return glNoLocation(glWif, sentence, m)
	case "GSM":
		return glNoLocation(glGsm, sentence, m)
	case "PNA", "PFA":
		return glNoLocation(glPna, sentence, m)
	case "DTT":
		return glNoLocation(glDtt, sentence, m)
	case "INF":
		// Device information: no coordinates. Traccar leaves the reports
		// of the GT300's long protocol version to the general decoder.
		if len(v) > 1 && len(v[1]) > 10 {
			return false
		}
		glIdentify(v, m)
	case "LBS":
		glIdentify(v, m) // cell towers only
	default:
		return false
	}
	return true
}

// glIdentify takes the identifier of a report decoded by its fields.
func glIdentify(v []string, m *devproto.Message) {
	if len(v) > 2 && devproto.IdentifierOK(v[2]) {
		m.Identifier = v[2]
	}
}

// glNoLocation identifies a report that carries no coordinates, when re
// recognises it.
func glNoLocation(re *regexp.Regexp, sentence string, m *devproto.Message) bool {
	f, ok := devproto.MatchGroups(re, sentence)
	if !ok {
		return false
	}
	if id := f.Group(1); devproto.IdentifierOK(id) {
		m.Identifier = id
	}
	return true
}

// glOneLocation decodes a report of one location whose groups start at
// group at of re; more, if any, sets what the report adds.
func glOneLocation(re *regexp.Regexp, sentence string, at int, m *devproto.Message, more func(*devproto.Position, *devproto.Groups)) bool {
	f, ok := devproto.MatchGroups(re, sentence)
	if !ok {
		return false
	}
	id := f.Group(1)
	if !devproto.IdentifierOK(id) {
		return true
	}
	m.Identifier = id
	f.Seek(at)
	p := devproto.NextPosition(m)
	if !glLocationFields(p, &f) || f.Bad {
		devproto.DropPosition(m)
		return true
	}
	if more != nil {
		more(p, &f)
	}
	return true
}

// glLocationFields reads the 20 groups of glLocation into p; false when
// they hold no coordinates.
func glLocationFields(p *devproto.Position, f *devproto.Groups) bool {
	hdop, hasHdop := f.NextFloatOK()
	if hasHdop {
		devproto.SetNum(p, devproto.AttrHDOP, hdop)
	}
	p.Speed, p.HasSpeed = f.NextFloat(0), true
	p.Heading, p.HasHeading = f.NextFloat(0), true
	p.Altitude, p.HasAltitude = f.NextFloat(0), true
	located := f.HasNext(8)
	if located {
		p.Longitude = f.NextFloat(0)
		p.Latitude = f.NextFloat(0)
		p.Time, p.Valid = f.NextDateTime() // no fix at a time that cannot exist
	}
	if f.HasNext(1) {
		f.Next() // wifi
	}
	if f.HasNext(6) {
		f.Skip(6) // cells
	}
	// The field after the cell is the signal on some models and the
	// odometer (km) on others (Gl200TextProtocolDecoder.java:346,393-395):
	// a decimal is kept as Traccar's "odometer", in metres.
	if v, ok := f.NextFloatOK(); ok {
		devproto.SetNum(p, "odometer", v*1000)
	}
	return located && devproto.Usable(p)
}

// glDecodeFri decodes GTFRI and the reports of the same form (GTGEO, GTRTL,
// GTDOG, GTCTN, GTSTR): one or more locations, then the device's state.
func glDecodeFri(sentence string, m *devproto.Message) bool {
	f, ok := devproto.MatchGroups(glFri, sentence)
	if !ok {
		return false
	}
	id := f.Next()
	if !devproto.IdentifierOK(id) {
		return true
	}
	m.Identifier = id
	f.Next() // vin
	power, hasPower := f.NextIntOK()
	reportType, hasReportType := f.NextIntOK()
	battery, hasBattery := f.NextIntOK()
	items := f.Next()

	last := -1 // the index of the last location's position, -1 when it had none
	for _, idx := range glLocationFind.FindAllStringSubmatchIndex(items, glMaxPositions) {
		item := devproto.NewGroups(items, idx)
		p := devproto.NextPosition(m)
		if glLocationFields(p, &item) && !item.Bad {
			last = len(m.Positions) - 1
		} else {
			devproto.DropPosition(m)
			last = -1
		}
	}
	if f.Bad {
		return true
	}
	if last < 0 {
		return true
	}
	// Which field is which after the locations depends on the model
	// (Traccar's pattern tries three layouts, Gl200TextProtocolDecoder.java:
	// 805-850, 880-930): the power, the battery's voltage, the
	// temperature and the odometer keep Traccar's names and units
	// ("power" and "battery" in V, "temp1" in °C, "odometer" in m); the
	// battery level, the hour meter (hhhhh:mm:ss, a form no other field
	// has) and the status word have one reading whatever the layout.
	p := &m.Positions[last]
	if hasPower && power > 10 {
		devproto.SetNum(p, "power", float64(power)/1000)
	}
	if hasBattery {
		devproto.SetNum(p, devproto.AttrBatteryLevel, float64(battery))
	}
	if f.HasNext(1) {
		devproto.SetNum(p, "battery", float64(f.NextInt(0))/1000)
	}
	if v, ok := f.NextIntOK(); ok {
		devproto.SetNum(p, devproto.AttrBatteryLevel, float64(v))
	}
	if v, ok := f.NextFloatOK(); ok {
		devproto.SetNum(p, "temp1", v)
	}
	if v, ok := f.NextFloatOK(); ok {
		devproto.SetNum(p, "odometer", v*1000)
	}
	if h := f.Next(); h != "" {
		if hours, ok := glHours(h); ok {
			devproto.SetNum(p, devproto.AttrEngineHours, hours)
		}
	}
	// Analogue inputs in hexadecimal, whose scale depends on the
	// model: kept as text, by Traccar's names.
	if a := f.Next(); a != "" {
		devproto.SetStr(p, "adc1", a)
	}
	if a := f.Next(); a != "" {
		devproto.SetStr(p, "adc2", a)
	}
	if v, ok := f.NextIntOK(); ok {
		devproto.SetNum(p, devproto.AttrBatteryLevel, float64(v))
	}
	if f.HasNext(1) {
		glStatus(p, f.NextHex(64, 0))
	}
	if v, ok := f.NextIntOK(); ok {
		devproto.SetNum(p, devproto.AttrRPM, float64(v))
	}
	if v, ok := f.NextIntOK(); ok {
		devproto.SetNum(p, "fuel", float64(v)) // a level whose unit the report does not say
	}
	if f.HasNext(2) {
		if hasReportType {
			devproto.SetBool(p, devproto.AttrMotion, reportType&1 != 0)
			devproto.SetBool(p, devproto.AttrCharging, reportType&2 != 0)
		}
		devproto.SetNum(p, devproto.AttrRSSI, float64(f.NextInt(0)))
		devproto.SetNum(p, devproto.AttrBatteryLevel, float64(f.NextInt(0)))
	}
	if v, ok := f.NextFloatOK(); ok {
		devproto.SetNum(p, "odometer", v*1000)
	}
	if v, ok := f.NextIntOK(); ok {
		devproto.SetNum(p, devproto.AttrBatteryLevel, float64(v))
	}
	return true
}

// glHours reads an hour meter (hhhhh:mm:ss) in hours.
func glHours(s string) (float64, bool) {
	var hours float64
	scale := [...]float64{1, 60, 3600}
	for i, part := range strings.SplitN(s, ":", 3) {
		v, ok := devproto.JavaInt(part)
		if !ok {
			return 0, false
		}
		hours += float64(v) / scale[i]
	}
	return hours, true
}

// glStatus sets the attributes of a device status word: ignition, inputs
// and outputs (Gl200TextProtocolDecoder.java:788-803).
func glStatus(p *devproto.Position, value int) {
	ignition := value >> 16 & 0xff
	if ignition&(1<<4) != 0 {
		devproto.SetBool(p, devproto.AttrIgnition, false)
	} else if ignition&(1<<5) != 0 {
		devproto.SetBool(p, devproto.AttrIgnition, true)
	}
	input, output := value>>8&0xff, value&0xff
	devproto.SetNum(p, "input", float64(input))
	devproto.SetBool(p, devproto.AttrDin[0], input&2 != 0)
	devproto.SetBool(p, devproto.AttrDin[1], input&4 != 0)
	devproto.SetNum(p, "output", float64(output))
	devproto.SetBool(p, devproto.AttrDout[0], output&1 != 0)
	devproto.SetBool(p, devproto.AttrDout[1], output&2 != 0)
}

// glModel is the model a protocol version names, as Traccar's table has
// it; "" for one it does not know.
func glModel(version string) (string, bool) {
	var prefix string
	switch {
	case len(version) > 6:
		prefix = version[:6]
	case len(version) >= 2:
		prefix = version[:2]
	default:
		return "", false
	}
	switch prefix {
	case "02", "21":
		return "GL200", true
	case "04", "35":
		return "GV200", true
	case "06", "25":
		return "GV300", true
	case "08", "3F":
		return "GMT100", true
	case "09":
		return "GV50P", true
	case "0F", "2F":
		return "GV55", true
	case "10":
		return "GV55 LITE", true
	case "11", "40":
		return "GL500", true
	case "1A", "30":
		return "GL300", true
	case "1F", "36":
		return "GV500", true
	case "27":
		return "GV300W", true
	case "28":
		return "GL300VC", true
	case "2C":
		return "GL300W", true
	case "2D":
		return "GV500VC", true
	case "4F":
		return "GV56", true
	case "31":
		return "GV65", true
	case "41":
		return "GV75W", true
	case "42":
		return "GT501", true
	case "44":
		return "GL530", true
	case "45":
		return "GB100", true
	case "50":
		return "GV55W", true
	case "52":
		return "GL50", true
	case "55":
		return "GL50B", true
	case "5E":
		return "GV500MAP", true
	case "6E":
		return "GV310LAU", true
	case "BD":
		return "CV200", true
	case "C2":
		return "GV600M", true
	case "C3":
		return "GL320M", true
	case "DC":
		return "GV600MG", true
	case "DE":
		return "GL500M", true
	case "DF":
		return "CV100LG", true
	case "F1":
		return "GV350M", true
	case "F8":
		return "GV800W", true
	case "FC":
		return "GV600W", true
	case "802004":
		return "GV58LAU", true
	case "802005":
		return "GV355CEU", true
	case "80201E":
		return "GV30CEU", true
	}
	return "", true
}

// glValues reads a report's comma-separated values by index; an index
// past the end or a number that does not parse (a Java exception) sets
// bad, and the report then gives nothing, as in Traccar.
type glValues struct {
	v   []string
	bad bool
}

func (r *glValues) at(i int) string {
	if i < 0 || i >= len(r.v) {
		r.bad = true
		return ""
	}
	return r.v[i]
}

// opt is value i, "" past the end, for the optional values that do not
// make a report unreadable.
func (r *glValues) opt(i int) string {
	if i < 0 || i >= len(r.v) {
		return ""
	}
	return r.v[i]
}

func (r *glValues) float(i int) float64 {
	v, ok := devproto.JavaDouble(r.at(i))
	if !ok {
		r.bad = true
	}
	return v
}

func (r *glValues) int(i int) int {
	v, ok := devproto.JavaInt(r.at(i))
	if !ok {
		r.bad = true
	}
	return v
}

// hex reads a hexadecimal number of bits bits.
func (r *glValues) hex(i, bits int) int {
	v, ok := devproto.JavaIntBase(r.at(i), 16, bits)
	if !ok {
		r.bad = true
	}
	return v
}

// glArrayLocation reads a location at index i of a report read by its
// fields (GTERI, GTIGN, GTDAT): hdop, speed, course, altitude, longitude,
// latitude, time, the cell, then (but on some models) a mask of what
// follows, satellites first. It appends the position if it has
// coordinates, and returns the index after the location.
func glArrayLocation(r *glValues, model string, i int, m *devproto.Message) (int, bool) {
	p := devproto.NextPosition(m)
	hdop := 0.0
	if r.at(i) != "" {
		hdop = r.float(i)
	}
	devproto.SetNum(p, devproto.AttrHDOP, hdop)
	if r.at(i+1) != "" {
		p.Speed = r.float(i + 1)
	}
	p.HasSpeed = true
	if r.at(i+2) != "" {
		p.Heading = float64(r.int(i + 2))
	}
	p.HasHeading = true
	if r.at(i+3) != "" {
		p.Altitude = r.float(i + 3)
	}
	p.HasAltitude = true
	i += 4
	located := r.at(i) != ""
	if located {
		p.Longitude = r.float(i)
		if r.at(i+1) != "" {
			p.Latitude = r.float(i + 1)
		}
		t, ok := devproto.ParseCompactTime(r.at(i + 2))
		if !ok {
			r.bad = true
		}
		p.Time = t
		p.Valid = !t.IsZero() // no fix at a time that cannot exist
	}
	i += 3
	if r.at(i) != "" {
		r.int(i)
		r.int(i + 1)
		r.hex(i+2, 32)
		r.hex(i+3, 64)
	}
	i += 4
	if strings.HasPrefix(model, "GL5") {
		i += 2 // csq rssi, csq ber
	}
	if model != "GL320M" {
		s := r.at(i)
		i++
		if s != "" {
			mask := r.int(i - 1)
			if mask&1 != 0 {
				p.Satellites, p.HasSatellites = r.int(i), true
				i++
			}
			if mask&2 != 0 {
				i++ // trigger type
			}
		}
	}
	if !located || r.bad || !devproto.Usable(p) {
		devproto.DropPosition(m)
		return i, false
	}
	return i, true
}

// glEri decodes GTERI: GTFRI with a mask of the attached devices, and a
// count of locations.
func glEri(v []string, m *devproto.Message) {
	r := glValues{v: v}
	id := r.at(2)
	model, ok := glModel(r.at(1))
	if !ok || r.bad || !devproto.IdentifierOK(id) {
		return
	}
	m.Identifier = id
	r.hex(4, 64) // mask
	power, hasPower := 0.0, r.at(5) != ""
	if hasPower {
		power = float64(r.int(5)) / 1000
	}
	count := r.int(7)
	start := len(m.Positions)
	i := 8
	kept := false
	for n := 0; n < count && n < glMaxPositions && !r.bad; n++ {
		i, kept = glArrayLocation(&r, model, i, m)
	}
	if r.bad {
		m.Positions = m.Positions[:start]
		return
	}
	if !kept {
		return
	}
	p := &m.Positions[len(m.Positions)-1]
	if hasPower {
		devproto.SetNum(p, devproto.AttrPowerV, power)
	}
	glEriState(&r, model, i, p)
}

// glEriState sets the attributes that follow GTERI's locations, which
// differ by model: odometer, hour meter, battery level, the status word.
// They are optional: what does not parse is left out.
func glEriState(r *glValues, model string, i int, p *devproto.Position) {
	gl5 := strings.HasPrefix(model, "GL5")
	if !gl5 {
		if km, ok := devproto.JavaDouble(r.opt(i)); ok {
			devproto.SetNum(p, devproto.AttrOdometerKm, km)
		}
		i++
	}
	if !gl5 && model != "GL320M" {
		if hours, ok := glHours(r.opt(i)); ok {
			devproto.SetNum(p, devproto.AttrEngineHours, hours)
		}
		i += 2 // hour meter, adc 1
	}
	if strings.HasPrefix(model, "GV") && !strings.HasPrefix(model, "GV6") && model != "GV350M" {
		i++ // adc 2
	}
	if model == "GV200" || model == "GV310LAU" {
		i++ // adc 3
	}
	if strings.HasPrefix(model, "GV3") && strings.HasSuffix(model, "CEU") || strings.HasPrefix(model, "GV600M") {
		i++ // reserved
	}
	switch {
	case gl5:
		if level, ok := devproto.JavaInt(r.opt(i)); ok {
			devproto.SetNum(p, devproto.AttrBatteryLevel, float64(level))
		}
		if motion, ok := devproto.JavaInt(r.opt(i + 2)); ok {
			devproto.SetBool(p, devproto.AttrMotion, motion > 0)
		}
	case model == "GV200":
		if in, ok := devproto.JavaIntBase(r.opt(i), 16, 32); ok {
			devproto.SetNum(p, "input", float64(in))
		}
		if out, ok := devproto.JavaIntBase(r.opt(i+1), 16, 32); ok {
			devproto.SetNum(p, "output", float64(out))
		}
	default:
		if level, ok := devproto.JavaInt(r.opt(i)); ok {
			devproto.SetNum(p, devproto.AttrBatteryLevel, float64(level))
		}
		if model != "GL320M" {
			if status, ok := devproto.JavaIntBase(r.opt(i+1), 16, 64); ok {
				glStatus(p, status)
			}
		}
	}
}

// glIgn decodes GTIGN, GTIGF, GTVGN and GTVGF: ignition on or off.
func glIgn(v []string, typ string, m *devproto.Message) {
	r := glValues{v: v}
	id := r.at(2)
	model, ok := glModel(r.at(1))
	if !ok || r.bad || !devproto.IdentifierOK(id) {
		return
	}
	m.Identifier = id
	i := 4 // after the device name
	if model == "CV200" {
		i += 2 // reserved, report type
	}
	i++ // duration of ignition on or off
	i, kept := glArrayLocation(&r, model, i, m)
	if !kept {
		return
	}
	p := &m.Positions[len(m.Positions)-1]
	devproto.SetBool(p, devproto.AttrIgnition, strings.Contains(typ, "GN"))
	if h := r.at(i); h != "" {
		if hours, ok := glHours(h); ok {
			devproto.SetNum(p, devproto.AttrEngineHours, hours)
		}
	}
	if s := r.at(i + 1); s != "" {
		if km, ok := devproto.JavaDouble(s); ok {
			devproto.SetNum(p, devproto.AttrOdometerKm, km)
		}
	}
}

// glDat decodes GTDAT: data of an attached device, and a location.
func glDat(v []string, m *devproto.Message) {
	r := glValues{v: v}
	id := r.at(2)
	model, ok := glModel(r.at(1))
	if !ok || r.bad || !devproto.IdentifierOK(id) {
		return
	}
	m.Identifier = id
	data := r.at(7)
	if _, kept := glArrayLocation(&r, model, 8, m); kept {
		devproto.SetStr(&m.Positions[len(m.Positions)-1], "data", data)
	}
}

// glCan decodes GTCAN: the vehicle's CAN bus values, a mask saying which
// are present, and (bit 30) a location.
func glCan(v []string, m *devproto.Message) {
	r := glValues{v: v}
	id := r.at(2)
	model, ok := glModel(r.at(1))
	if !ok || r.bad || !devproto.IdentifierOK(id) {
		return
	}
	m.Identifier = id
	mask := r.hex(6, 64)
	if r.bad {
		return
	}
	i := 7
	// One value a bit of the mask's bits 0 to 21, and of some models' 22
	// to 28.
	i += bits.OnesCount32(uint32(mask) & 0x3fffff)
	switch model {
	case "GV350M":
		i += bits.OnesCount32(uint32(mask) & (7 << 22))
	case "GV355CEU":
		i += bits.OnesCount32(uint32(mask) & (0x7f << 22))
	}
	ext := 0
	if mask&(1<<29) != 0 {
		if r.at(i) != "" {
			ext = r.hex(i, 64)
		}
		i++
	}
	i += bits.OnesCount32(uint32(ext) & 0x7fffffff)
	if ext&(1<<31) != 0 {
		canMask := 0
		if r.at(i) != "" {
			canMask = r.hex(i, 64)
		}
		i++
		i += bits.OnesCount32(uint32(canMask) & 7)
	}
	if model == "GV355CEU" || mask&(1<<30) == 0 || r.bad {
		return
	}
	for !r.bad && r.at(i) == "" {
		i++
	}
	valid := r.int(i) > 0
	i++
	if r.bad || r.at(i) == "" {
		return
	}
	p := devproto.NextPosition(m)
	p.Valid = valid
	p.Speed, p.HasSpeed = r.float(i), true
	p.Heading, p.HasHeading = float64(r.int(i+1)), true
	p.Altitude, p.HasAltitude = r.float(i+2), true
	p.Longitude = r.float(i + 3)
	p.Latitude = r.float(i + 4)
	t, ok := devproto.ParseCompactTime(r.at(i + 5))
	p.Time = t
	p.Valid = p.Valid && !t.IsZero() // no fix at a time that cannot exist
	if !ok || r.bad || !devproto.Usable(p) {
		devproto.DropPosition(m)
	}
}

// glBasic is the general decoder, for the reports without one of their
// own (GTSOS, GTSPD, GTSTT, GTNMR, GTPNL, GTHBM, GTTOW, GTIDL...) and
// those their own does not recognise: it finds the longitude and latitude
// among the fields, and reads the hdop, speed, course and altitude before
// them and the time after.
func glBasic(typ string, v []string, m *devproto.Message) {
	r := glValues{v: v}
	id := r.at(2)
	r.at(5)
	if r.bad || !devproto.IdentifierOK(id) {
		return
	}
	m.Identifier = id
	i := 3
	found := false
	for i+2 < len(v) {
		if glDegrees(v[i]) && glDegrees(v[i+1]) {
			found = true
			break
		}
		i++
	}
	if !found || i < 4 {
		return
	}
	i -= 4
	p := devproto.NextPosition(m)
	devproto.SetNum(p, devproto.AttrHDOP, float64(r.int(i)))
	p.Speed, p.HasSpeed = r.float(i+1), true
	p.Heading, p.HasHeading = float64(r.int(i+2)), true
	p.Altitude, p.HasAltitude = r.float(i+3), true
	p.Longitude = r.float(i + 4)
	p.Latitude = r.float(i + 5)
	t, ok := devproto.ParseCompactTime(r.at(i + 6))
	p.Time = t
	p.Valid = !t.IsZero() // no fix at a time that cannot exist
	if !ok || r.bad || !devproto.Usable(p) {
		devproto.DropPosition(m)
		return
	}

	if n := r.at(5); len(n) >= 1 && len(n) <= 2 && glHexDigits(n) {
		report, _ := devproto.JavaIntBase(n, 16, 32)
		switch typ {
		case "NMR":
			devproto.SetBool(p, devproto.AttrMotion, report == 1)
		case "DIS":
			// An input changed: its number, then its state.
			if in := report / 0x10; in >= 1 && in <= len(devproto.AttrDin) {
				devproto.SetBool(p, devproto.AttrDin[in-1], report%0x10 == 1)
			} else {
				devproto.SetBool(p, "in"+devproto.CodeString(in), report%0x10 == 1)
			}
		case "IGL":
			devproto.SetBool(p, devproto.AttrIgnition, report%0x10 == 1)
		case "HBM":
			switch report % 0x10 {
			case 0, 3:
				devproto.SetStr(p, devproto.AttrAlarm, devproto.AlarmHardBraking)
			case 1, 4:
				devproto.SetStr(p, devproto.AttrAlarm, devproto.AlarmHardAcceleration)
			case 2:
				devproto.SetStr(p, devproto.AttrAlarm, devproto.AlarmHardCornering)
			}
		}
	}
	if len(v[len(v)-2]) == 14 {
		if b := v[len(v)-3]; len(b) >= 1 && len(b) <= 3 && devproto.AllDigits(b) {
			level, _ := devproto.JavaInt(b)
			devproto.SetNum(p, devproto.AttrBatteryLevel, float64(level))
		}
	}
	if alarm := glAlarm(typ); alarm != "" {
		devproto.SetStr(p, devproto.AttrAlarm, alarm)
	}
}

// glAlarm is the common alarm word of a report type, as Traccar reads
// them (Gl200TextProtocolDecoder.java:1705-1719 at 9e5c458ad0bf), "" for
// none. Traccar's idle (GTIDL), power on and off of the device itself
// (GTPNA, GTPFA) and geofence (GTSWG) have no common word: the report's
// type stays in "event".
func glAlarm(typ string) string {
	switch typ {
	case "SOS":
		return devproto.AlarmSOS
	case "SPD":
		return devproto.AlarmOverspeed
	case "TOW":
		return devproto.AlarmTow
	case "EPN", "MPN":
		return devproto.AlarmPowerRestored
	case "EPF", "MPF":
		return devproto.AlarmPowerCut
	case "BPL":
		return devproto.AlarmLowBattery
	case "STT":
		return devproto.AlarmMovement
	case "TMP", "TEM":
		return devproto.AlarmTemperature
	case "JDR", "JDS":
		return devproto.AlarmJamming
	}
	return ""
}

// glDegrees reports whether s is a coordinate as the reports write them
// (-?\d{1,3}\.\d{6}).
func glDegrees(s string) bool {
	s = strings.TrimPrefix(s, "-")
	dot := strings.IndexByte(s, '.')
	return dot >= 1 && dot <= 3 && len(s)-dot-1 == 6 && devproto.AllDigits(s[:dot]) && devproto.AllDigits(s[dot+1:])
}

func glHexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}
