// Package h02 decodes the H02 protocol (Sinotrack and many other trackers): text
// sentences `*HQ,<id>,<type>,...#` and binary `$` frames of fixed length,
// over TCP and UDP. It follows Traccar's H02FrameDecoder and
// H02ProtocolDecoder.
//
// Replies: a V1 report gets `*HQ,<id>,V4,V1,<yyyyMMddHHmmss>#` (the
// server's time), a V0 or HTBT heartbeat is echoed up to its type
// (`*HQ,<id>,HTBT#`); nothing else is acknowledged.
//
// Sentences without coordinates (NBR, LINK and V3 cell reports, SMS,
// results without a fix) carry no position: Traccar gives them the
// device's last location, which is the server's to know, not the frame's.
//
// Decoder is its devproto.Decoder, which the listeners of fleetdevice
// serve (fleetdevice.Protocols). Commands to devices go the other way:
// Encoder (encode.go) turns a command into the sentence the device reads,
// and the Decoder reads the device's V4 answer as the command's result.
package h02

import (
	"encoding/hex"
	"strings"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Decoder decodes the h02 protocol's frames (TCP) and datagrams (UDP).
// It holds no state: the zero value is ready, and one serves every
// connection.
type Decoder struct{}

func (Decoder) Name() string  { return "h02" }
func (Decoder) MaxFrame() int { return 2048 }

// Binary frame lengths: 32 bytes; 45 bytes (newer devices, the same
// fields then 13 more); 42 bytes (a 15-digit IMEI in 8 bytes).
const (
	h02Short = 32
	h02IMEI  = 42
	h02Long  = 45
)

// Split finds a text sentence (`*` up to `#`), a binary frame (`$`, 32, 42
// or 45 bytes) or a 32-byte `X` frame; CR and LF between frames are
// skipped.
//
// A binary frame does not say its length. Split takes 32 when the byte
// after 32 starts a frame or when exactly 32 bytes are buffered, 45 when
// the byte after 45 does or 45 are buffered, 42 likewise, and 45 when
// nothing tells; it waits while 33 to 41, 43 or 44 bytes are buffered. A
// 45-byte frame whose first 32 (or 42) bytes arrive alone is therefore
// cut short, and the rest of it is garbage.
func (h Decoder) Split(buf []byte) (int, error) {
	i := devproto.LeadingCRLF(buf)
	if i >= h.MaxFrame() {
		return 0, devproto.ErrGarbage
	}
	if i == len(buf) {
		return 0, nil
	}
	switch buf[i] {
	case '*':
		n, err := devproto.SplitText(buf[i:], h.MaxFrame(), func(byte) bool { return true }, func(c byte) bool { return c == '#' })
		if n == 0 || err != nil {
			return 0, err
		}
		return i + n, nil
	case '$':
		n := h02BinaryLength(buf[i:])
		if n == 0 {
			return 0, nil
		}
		return i + n, nil
	case 'X':
		if len(buf)-i < h02Short {
			return 0, nil
		}
		return i + h02Short, nil
	}
	return 0, devproto.ErrGarbage
}

// h02BinaryLength is the length of the binary frame at the start of b, 0
// when more bytes are needed to tell.
func h02BinaryLength(b []byte) int {
	starts := func(at int) bool {
		if at >= len(b) {
			return false
		}
		switch b[at] {
		case '*', '$', 'X', '\r', '\n':
			return true
		}
		return false
	}
	switch n := len(b); {
	case n == h02Short || starts(h02Short):
		return h02Short
	case n < h02IMEI:
		return 0
	case n == h02IMEI:
		return h02IMEI
	case n < h02Long:
		return 0 // more of a 45-byte frame, or the next after a 42-byte one
	case n == h02Long || starts(h02Long):
		return h02Long
	case starts(h02IMEI):
		return h02IMEI
	}
	return h02Long
}

// Decode decodes one frame (or datagram).
func (h Decoder) Decode(frame []byte, s *devproto.Session, m *devproto.Message) error {
	frame = frame[devproto.LeadingCRLF(frame):]
	if len(frame) == 0 || len(frame) > h.MaxFrame() {
		return devproto.ErrGarbage
	}
	switch frame[0] {
	case '*':
		text := devproto.TrimLine(frame)
		if devproto.HasTextControl(text) || text[len(text)-1] != '#' {
			return devproto.ErrGarbage
		}
		h02Text(string(text), s, m)
		return nil
	case '$':
		return h02Binary(frame, m)
	case 'X':
		// A frame Traccar reads past and decodes nothing of.
		m.Kind = devproto.KindOther
		return nil
	}
	return devproto.ErrGarbage
}

// h02Text decodes a text sentence.
func h02Text(sentence string, s *devproto.Session, m *devproto.Message) {
	m.Kind = devproto.KindOther
	typeStart := indexFrom(sentence, ',', strings.IndexByte(sentence, ',')+1) + 1
	typeEnd := indexFrom(sentence, ',', typeStart)
	if typeEnd < 0 {
		typeEnd = indexFrom(sentence, '#', typeStart)
	}
	if typeEnd <= 0 {
		return
	}
	switch sentence[typeStart:typeEnd] {
	case "V0", "HTBT":
		m.Kind = devproto.KindHeartbeat
		m.Identifier = h02IDField(sentence)
		m.Reply = append(append(m.Reply, sentence[:typeEnd]...), '#')
	case "NBR", "LINK", "V3", "SMS":
		// Cell reports, device status and SMS text: no coordinates.
		m.Identifier = h02IDField(sentence)
	case "VP1":
		h02VP1(sentence, m)
	default:
		h02Report(sentence, s, m)
	}
}

// h02IDField is the sentence's identifier field (between its first two
// commas) when it is one.
func h02IDField(sentence string) string {
	first := strings.IndexByte(sentence, ',')
	if first < 0 {
		return ""
	}
	rest := sentence[first+1:]
	end := strings.IndexAny(rest, ",#")
	if end < 0 {
		return ""
	}
	if id := rest[:end]; devproto.IdentifierOK(id) {
		return id
	}
	return ""
}

func indexFrom(s string, c byte, from int) int {
	if from < 0 || from > len(s) {
		return -1
	}
	i := strings.IndexByte(s[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

var h02Pattern = devproto.NewPattern().
	Text("*").
	Expression("..,"). // manufacturer
	Number("(d+)?,").  // imei
	GroupBegin().
	Text("V4,").
	Expression("(.*),"). // response
	Or().
	Expression("(V[^,]*),").
	GroupEnd("").
	Number("(?:(dd)(dd)(dd))?,"). // time (hhmmss)
	GroupBegin().
	Expression("([ABV])?,"). // validity
	Or().
	Number("(d+),"). // coding scheme
	GroupEnd("").
	GroupBegin().
	Number("-(d+)-(d+.d+),([NS]),"). // latitude
	Or().
	Number("(d*)(dd.d+),([NS]),"). // latitude
	Or().
	Number("(d+)(dd)(d{4}),([NS]),"). // latitude
	GroupEnd("").
	GroupBegin().
	Number("-(d+)-(d+.d+),([EW]),"). // longitude
	Or().
	Number("(d*)(dd.d+),([EW]),"). // longitude
	Or().
	Number("(d+)(dd)(d{4}),([EW]),"). // longitude
	GroupEnd("").
	Number(" *(d+.?d*),").       // speed
	Number("(d+.?d*)?,").        // course
	Number("(?:d+,)?").          // battery
	Number("(?:(dd)(dd)(dd))?"). // date (ddmmyy)
	GroupBegin().
	Expression(",[^,]*,").
	Expression("[^,]*,").
	Expression("[^,]*"). // sim info
	// Lazy, where Traccar's is greedy: a status word right after the
	// date is read as the status even when three fields follow the
	// date, which Traccar takes for the SIM's (its test's
	// "...,080918,EEE7FBDF,4261193,0#" carries a power cut); the SIM's
	// fields, which start with an empty one, are read as before.
	GroupEnd("??").
	GroupBegin().
	Number(",(x{8})"). // status
	GroupBegin().
	Number(",(d+),").   // odometer
	Number("(-?d+),").  // temperature
	Number("(d+.d+),"). // fuel
	Number("(-?d+),").  // altitude
	Number("(x+),").    // lac
	Number("(x+)").     // cid
	Or().
	Text(",").
	Expression("(.*)"). // data
	Or().
	GroupEnd("").
	Or().
	GroupEnd("").
	Text("#").
	Whole()

// h02Report decodes a position report (V1, V2, V4, V5, V6, V8, VI1, V19...).
func h02Report(sentence string, s *devproto.Session, m *devproto.Message) {
	f, ok := devproto.MatchGroups(h02Pattern, sentence)
	if !ok {
		return
	}
	id := f.Next()
	if id != "" && !devproto.IdentifierOK(id) {
		return
	}
	p := devproto.NextPosition(m)
	if f.HasNext(1) {
		// A V4 sentence answers a command: the attribute as Traccar
		// has it, and the command's result without the command's time
		// that it echoes last.
		answer := f.Next()
		devproto.SetStr(p, "result", answer)
		result := answer
		if i := strings.LastIndexByte(result, ','); i >= 0 && len(result)-i == 7 && devproto.AllDigits(result[i+1:]) {
			result = result[:i]
		}
		m.CommandResult, m.HasResult = result, true
	}
	if f.HasNext(1) && f.Next() == "V1" && id != "" {
		m.Reply = append(m.Reply, "*HQ,"...)
		m.Reply = append(m.Reply, id...)
		m.Reply = append(m.Reply, ",V4,V1,"...)
		m.Reply = s.Now.UTC().AppendFormat(m.Reply, "20060102150405")
		m.Reply = append(m.Reply, '#')
	}

	var hour, minute, second int
	if f.HasNext(3) {
		hour, minute, second = f.NextInt(0), f.NextInt(0), f.NextInt(0)
	}
	if f.HasNext(1) {
		p.Valid = f.Next() == "A"
	}
	if f.HasNext(1) {
		f.Next() // coding scheme
		p.Valid = true
	}

	if f.HasNext(3) {
		p.Latitude = f.NextCoordinate()
	}
	if f.HasNextAny(3) {
		p.Latitude = f.NextCoordinate()
	}
	if f.HasNext(4) {
		p.Latitude = f.NextCoordinateMinMin()
	}
	if f.HasNext(3) {
		p.Longitude = f.NextCoordinate()
	}
	if f.HasNextAny(3) {
		p.Longitude = f.NextCoordinate()
	}
	if f.HasNext(4) {
		p.Longitude = f.NextCoordinateMinMin()
	}

	p.Speed, p.HasSpeed = f.NextFloat(0)*devproto.KnotsToKmh, true
	p.Heading, p.HasHeading = f.NextFloat(0), true

	if f.HasNext(3) {
		day, month, year := f.NextInt(0), f.NextInt(0), f.NextInt(0)
		devproto.SetCivilTime(p, year, month, day, hour, minute, second)
	} else {
		p.Time = s.Now.UTC()
	}

	if f.HasNext(1) {
		h02Status(p, uint32(f.NextHex(64, 0)))
	}
	if f.HasNext(6) {
		// Odometer and fuel in units Traccar does not settle: kept by
		// its names, as read (H02ProtocolDecoder.java:405-410).
		devproto.SetNum(p, "odometer", float64(f.NextInt(0)))
		devproto.SetNum(p, devproto.AttrTempC[0], float64(f.NextInt(0)))
		devproto.SetNum(p, "fuel", f.NextFloat(0))
		p.Altitude, p.HasAltitude = float64(f.NextInt(0)), true
		f.Skip(2) // lac, cid
	}
	if f.HasNext(1) {
		for i, v := range strings.Split(f.Next(), ",") {
			if i >= devproto.MaxAttrs/2 {
				break
			}
			if v = strings.TrimSpace(v); v != "" && devproto.AttrTextOK(v) {
				// Values of unknown meaning, numbered as Traccar does
				// (H02ProtocolDecoder.java:416-421): "io1", "io2"...
				devproto.SetAttr(p, devproto.Attribute{IO: i + 1, Kind: devproto.AttrString, Str: v})
			}
		}
	}

	if f.Bad || !devproto.Usable(p) {
		devproto.DropPosition(m)
		return
	}
	m.Kind = devproto.KindPositions
	m.Identifier = id
}

var h02PatternVP1 = devproto.NewPattern().
	Text("*hq,").
	Number("(d{15}),"). // imei
	Text("VP1,").
	GroupBegin().
	Text("V,").
	Number("(d+),").       // mcc
	Number("(d+),").       // mnc
	Expression("([^#]+)"). // cells
	Or().
	Expression("[AB],").    // validity
	Number("(d+)(dd.d+),"). // latitude
	Expression("([NS]),").
	Number("(d+)(dd.d+),"). // longitude
	Expression("([EW]),").
	Number("(d+.d+),").     // speed
	Number("(d+.d+),").     // course
	Number("(dd)(dd)(dd)"). // date (ddmmyy)
	GroupEnd("").
	Any().
	Whole()

// h02VP1 decodes a VP1 sentence: a fix, or cell towers only.
func h02VP1(sentence string, m *devproto.Message) {
	f, ok := devproto.MatchGroups(h02PatternVP1, sentence)
	if !ok {
		return
	}
	id := f.Next()
	m.Identifier = id
	if f.HasNext(3) {
		return // cell towers only
	}
	p := devproto.NextPosition(m)
	p.Valid = true
	p.Latitude = f.NextCoordinate()
	p.Longitude = f.NextCoordinate()
	p.Speed, p.HasSpeed = f.NextFloat(0)*devproto.KnotsToKmh, true
	p.Heading, p.HasHeading = f.NextFloat(0), true
	day, month, year := f.NextInt(0), f.NextInt(0), f.NextInt(0)
	devproto.SetCivilTime(p, year, month, day, 0, 0, 0)
	if f.Bad || !devproto.Usable(p) {
		devproto.DropPosition(m)
		return
	}
	m.Kind = devproto.KindPositions
}

// h02Status sets the attributes of the status word (its bits are 0 when
// set): the first alarm of vibration (bit 0), SOS (1 or 18), overspeed
// (2) and power cut (19), the ignition (bit 10, 1 when on) and the word
// itself as "status" (H02ProtocolDecoder.java:80-94 at 9e5c458ad0bf).
func h02Status(p *devproto.Position, status uint32) {
	bit := func(i uint) bool { return status&(1<<i) != 0 }
	switch {
	case !bit(0):
		devproto.SetStr(p, devproto.AttrAlarm, devproto.AlarmVibration)
	case !bit(1) || !bit(18):
		devproto.SetStr(p, devproto.AttrAlarm, devproto.AlarmSOS)
	case !bit(2):
		devproto.SetStr(p, devproto.AttrAlarm, devproto.AlarmOverspeed)
	case !bit(19):
		devproto.SetStr(p, devproto.AttrAlarm, devproto.AlarmPowerCut)
	}
	devproto.SetBool(p, devproto.AttrIgnition, bit(10))
	devproto.SetNum(p, "status", float64(status))
}

// h02Binary decodes a binary frame: '$', the identifier (5 bytes of BCD,
// or 8 bytes holding a 15-digit IMEI in a 42-byte frame), time and date,
// latitude, battery, longitude and flags, speed and course, status.
func h02Binary(frame []byte, m *devproto.Message) error {
	b := frame[1:]
	idLen := 5
	if len(frame) == h02IMEI {
		idLen = 8
	}
	const fields = 3 + 3 + 4 + 1 + 5 + 3 + 4
	if len(b) < idLen+fields {
		return devproto.ErrGarbage
	}
	var idBuf [16]byte
	hex.Encode(idBuf[:], b[:idLen])
	id := string(idBuf[:2*idLen])
	if idLen == 8 {
		id = id[:15]
	}
	b = b[idLen:]

	// Every field but the battery, the flags and the status is BCD: a
	// nibble past 9 is not H02 (a frame cut at the wrong length).
	if !h02BCD(b[0:10]) || !h02BCD(b[11:15]) || b[15]>>4 > 9 || !h02BCD(b[16:19]) {
		return devproto.ErrGarbage
	}
	bcd := func(bs []byte) int {
		v := 0
		for _, c := range bs {
			v = v*100 + int(c>>4)*10 + int(c&0x0f)
		}
		return v
	}
	hour, minute, second := bcd(b[0:1]), bcd(b[1:2]), bcd(b[2:3])
	day, month, year := bcd(b[3:4]), bcd(b[4:5]), bcd(b[5:6])

	// Latitude: DD MM.MMMM.
	lat := float64(bcd(b[6:7])) + float64(bcd(b[7:10]))/10000/60
	battery := int(b[10])
	// Longitude: DDD MM.MMMM then the flags nibble.
	lo := b[11:16]
	lonDeg := bcd(lo[0:1])*10 + int(lo[1]>>4)
	lonMin := float64(int(lo[1]&0x0f)*10) + float64(bcd(lo[2:4])*10+int(lo[4]>>4))/10000
	lon := float64(lonDeg) + lonMin/60
	flags := lo[4] & 0x0f
	if flags&0x04 == 0 {
		lat = -lat
	}
	if flags&0x08 == 0 {
		lon = -lon
	}
	sc := b[16:19]
	speed := bcd(sc[0:1])*10 + int(sc[1]>>4)
	course := int(sc[1]&0x0f)*100 + bcd(sc[2:3])
	status := uint32(b[19])<<24 | uint32(b[20])<<16 | uint32(b[21])<<8 | uint32(b[22])

	m.Kind = devproto.KindOther
	m.Identifier = id
	p := devproto.NextPosition(m)
	p.Latitude, p.Longitude = lat, lon
	p.Valid = flags&0x02 != 0
	devproto.SetCivilTime(p, year, month, day, hour, minute, second)
	p.Speed, p.HasSpeed = float64(speed)*devproto.KnotsToKmh, true
	p.Heading, p.HasHeading = float64(course), true
	if level, ok := h02Battery(battery); ok {
		devproto.SetNum(p, devproto.AttrBatteryLevel, float64(level))
	}
	h02Status(p, status)
	if !devproto.Usable(p) {
		devproto.DropPosition(m)
		return nil
	}
	m.Kind = devproto.KindPositions
	return nil
}

// h02Battery reads the battery byte of a binary frame as a percentage.
func h02Battery(v int) (int, bool) {
	switch {
	case v == 0:
		return 0, false
	case v <= 3:
		return (v - 1) * 10, true
	case v <= 6:
		return (v - 1) * 20, true
	case v <= 100:
		return v, true
	case v >= 0xf1 && v <= 0xf6:
		return v - 0xf0, true
	}
	return 0, false
}

func h02BCD(bs []byte) bool {
	for _, c := range bs {
		if c>>4 > 9 || c&0x0f > 9 {
			return false
		}
	}
	return true
}
