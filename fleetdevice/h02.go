package fleetdevice

import (
	"encoding/hex"
	"strings"
)

// h02 decodes the H02 protocol (Sinotrack and many other trackers): text
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
type h02 struct{}

// H02 returns the h02 protocol's decoder.
func H02() Protocol { return h02{} }

func (h02) Name() string  { return "h02" }
func (h02) Port() int     { return 5013 }
func (h02) UDP() bool     { return true }
func (h02) MaxFrame() int { return 2048 }

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
func (h h02) Split(buf []byte) (int, error) {
	i := leadingCRLF(buf)
	if i >= h.MaxFrame() {
		return 0, ErrGarbage
	}
	if i == len(buf) {
		return 0, nil
	}
	switch buf[i] {
	case '*':
		n, err := splitText(buf[i:], h.MaxFrame(), func(byte) bool { return true }, func(c byte) bool { return c == '#' })
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
	return 0, ErrGarbage
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
func (h h02) Decode(frame []byte, s *Session, m *Message) error {
	frame = frame[leadingCRLF(frame):]
	if len(frame) == 0 || len(frame) > h.MaxFrame() {
		return ErrGarbage
	}
	switch frame[0] {
	case '*':
		text := trimLine(frame)
		if hasTextControl(text) || text[len(text)-1] != '#' {
			return ErrGarbage
		}
		h02Text(string(text), s, m)
		return nil
	case '$':
		return h02Binary(frame, m)
	case 'X':
		// A frame Traccar reads past and decodes nothing of.
		m.Kind = KindOther
		return nil
	}
	return ErrGarbage
}

// h02Text decodes a text sentence.
func h02Text(sentence string, s *Session, m *Message) {
	m.Kind = KindOther
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
		m.Kind = KindHeartbeat
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
	if id := rest[:end]; identifierOK(id) {
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

var h02Pattern = newPattern().
	text("*").
	expression("..,"). // manufacturer
	number("(d+)?,").  // imei
	groupBegin().
	text("V4,").
	expression("(.*),"). // response
	or().
	expression("(V[^,]*),").
	groupEnd("").
	number("(?:(dd)(dd)(dd))?,"). // time (hhmmss)
	groupBegin().
	expression("([ABV])?,"). // validity
	or().
	number("(d+),"). // coding scheme
	groupEnd("").
	groupBegin().
	number("-(d+)-(d+.d+),([NS]),"). // latitude
	or().
	number("(d*)(dd.d+),([NS]),"). // latitude
	or().
	number("(d+)(dd)(d{4}),([NS]),"). // latitude
	groupEnd("").
	groupBegin().
	number("-(d+)-(d+.d+),([EW]),"). // longitude
	or().
	number("(d*)(dd.d+),([EW]),"). // longitude
	or().
	number("(d+)(dd)(d{4}),([EW]),"). // longitude
	groupEnd("").
	number(" *(d+.?d*),").       // speed
	number("(d+.?d*)?,").        // course
	number("(?:d+,)?").          // battery
	number("(?:(dd)(dd)(dd))?"). // date (ddmmyy)
	groupBegin().
	expression(",[^,]*,").
	expression("[^,]*,").
	expression("[^,]*"). // sim info
	// Lazy, where Traccar's is greedy: a status word right after the
	// date is read as the status even when three fields follow the
	// date, which Traccar takes for the SIM's (its test's
	// "...,080918,EEE7FBDF,4261193,0#" carries a power cut); the SIM's
	// fields, which start with an empty one, are read as before.
	groupEnd("??").
	groupBegin().
	number(",(x{8})"). // status
	groupBegin().
	number(",(d+),").   // odometer
	number("(-?d+),").  // temperature
	number("(d+.d+),"). // fuel
	number("(-?d+),").  // altitude
	number("(x+),").    // lac
	number("(x+)").     // cid
	or().
	text(",").
	expression("(.*)"). // data
	or().
	groupEnd("").
	or().
	groupEnd("").
	text("#").
	whole()

// h02Report decodes a position report (V1, V2, V4, V5, V6, V8, VI1, V19...).
func h02Report(sentence string, s *Session, m *Message) {
	f, ok := matchGroups(h02Pattern, sentence)
	if !ok {
		return
	}
	id := f.next()
	if id != "" && !identifierOK(id) {
		return
	}
	p := takePosition(m)
	if f.hasNext(1) {
		setStr(p, "result", f.next())
	}
	if f.hasNext(1) && f.next() == "V1" && id != "" {
		m.Reply = append(m.Reply, "*HQ,"...)
		m.Reply = append(m.Reply, id...)
		m.Reply = append(m.Reply, ",V4,V1,"...)
		m.Reply = s.Now.UTC().AppendFormat(m.Reply, "20060102150405")
		m.Reply = append(m.Reply, '#')
	}

	var hour, minute, second int
	if f.hasNext(3) {
		hour, minute, second = f.nextInt(0), f.nextInt(0), f.nextInt(0)
	}
	if f.hasNext(1) {
		p.Valid = f.next() == "A"
	}
	if f.hasNext(1) {
		f.next() // coding scheme
		p.Valid = true
	}

	if f.hasNext(3) {
		p.Latitude = f.nextCoordinate()
	}
	if f.hasNextAny(3) {
		p.Latitude = f.nextCoordinate()
	}
	if f.hasNext(4) {
		p.Latitude = f.nextCoordinateMinMin()
	}
	if f.hasNext(3) {
		p.Longitude = f.nextCoordinate()
	}
	if f.hasNextAny(3) {
		p.Longitude = f.nextCoordinate()
	}
	if f.hasNext(4) {
		p.Longitude = f.nextCoordinateMinMin()
	}

	p.Speed, p.HasSpeed = f.nextFloat(0)*knotsToKmh, true
	p.Heading, p.HasHeading = f.nextFloat(0), true

	if f.hasNext(3) {
		day, month, year := f.nextInt(0), f.nextInt(0), f.nextInt(0)
		setCivilTime(p, year, month, day, hour, minute, second)
	} else {
		p.Time = s.Now.UTC()
	}

	if f.hasNext(1) {
		h02Status(p, uint32(f.nextHex(64, 0)))
	}
	if f.hasNext(6) {
		// Odometer and fuel in units Traccar does not settle: kept by
		// its names, as read (H02ProtocolDecoder.java:405-410).
		setNum(p, "odometer", float64(f.nextInt(0)))
		setNum(p, attrTempC[0], float64(f.nextInt(0)))
		setNum(p, "fuel", f.nextFloat(0))
		p.Altitude, p.HasAltitude = float64(f.nextInt(0)), true
		f.skip(2) // lac, cid
	}
	if f.hasNext(1) {
		for i, v := range strings.Split(f.next(), ",") {
			if i >= textMaxAttrs/2 {
				break
			}
			if v = strings.TrimSpace(v); v != "" && attrTextOK(v) {
				// Values of unknown meaning, numbered as Traccar does
				// (H02ProtocolDecoder.java:416-421): "io1", "io2"...
				setAttr(p, Attribute{IO: i + 1, Kind: AttrString, Str: v})
			}
		}
	}

	if f.bad || !usable(p) {
		dropPosition(m)
		return
	}
	m.Kind = KindPositions
	m.Identifier = id
}

var h02PatternVP1 = newPattern().
	text("*hq,").
	number("(d{15}),"). // imei
	text("VP1,").
	groupBegin().
	text("V,").
	number("(d+),").       // mcc
	number("(d+),").       // mnc
	expression("([^#]+)"). // cells
	or().
	expression("[AB],").    // validity
	number("(d+)(dd.d+),"). // latitude
	expression("([NS]),").
	number("(d+)(dd.d+),"). // longitude
	expression("([EW]),").
	number("(d+.d+),").     // speed
	number("(d+.d+),").     // course
	number("(dd)(dd)(dd)"). // date (ddmmyy)
	groupEnd("").
	any().
	whole()

// h02VP1 decodes a VP1 sentence: a fix, or cell towers only.
func h02VP1(sentence string, m *Message) {
	f, ok := matchGroups(h02PatternVP1, sentence)
	if !ok {
		return
	}
	id := f.next()
	m.Identifier = id
	if f.hasNext(3) {
		return // cell towers only
	}
	p := takePosition(m)
	p.Valid = true
	p.Latitude = f.nextCoordinate()
	p.Longitude = f.nextCoordinate()
	p.Speed, p.HasSpeed = f.nextFloat(0)*knotsToKmh, true
	p.Heading, p.HasHeading = f.nextFloat(0), true
	day, month, year := f.nextInt(0), f.nextInt(0), f.nextInt(0)
	setCivilTime(p, year, month, day, 0, 0, 0)
	if f.bad || !usable(p) {
		dropPosition(m)
		return
	}
	m.Kind = KindPositions
}

// h02Status sets the attributes of the status word (its bits are 0 when
// set): the first alarm of vibration (bit 0), SOS (1 or 18), overspeed
// (2) and power cut (19), the ignition (bit 10, 1 when on) and the word
// itself as "status" (H02ProtocolDecoder.java:80-94 at 9e5c458ad0bf).
func h02Status(p *Position, status uint32) {
	bit := func(i uint) bool { return status&(1<<i) != 0 }
	switch {
	case !bit(0):
		setStr(p, attrAlarm, alarmVibration)
	case !bit(1) || !bit(18):
		setStr(p, attrAlarm, alarmSOS)
	case !bit(2):
		setStr(p, attrAlarm, alarmOverspeed)
	case !bit(19):
		setStr(p, attrAlarm, alarmPowerCut)
	}
	setBool(p, attrIgnition, bit(10))
	setNum(p, "status", float64(status))
}

// h02Binary decodes a binary frame: '$', the identifier (5 bytes of BCD,
// or 8 bytes holding a 15-digit IMEI in a 42-byte frame), time and date,
// latitude, battery, longitude and flags, speed and course, status.
func h02Binary(frame []byte, m *Message) error {
	b := frame[1:]
	idLen := 5
	if len(frame) == h02IMEI {
		idLen = 8
	}
	const fields = 3 + 3 + 4 + 1 + 5 + 3 + 4
	if len(b) < idLen+fields {
		return ErrGarbage
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
		return ErrGarbage
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

	m.Kind = KindOther
	m.Identifier = id
	p := takePosition(m)
	p.Latitude, p.Longitude = lat, lon
	p.Valid = flags&0x02 != 0
	setCivilTime(p, year, month, day, hour, minute, second)
	p.Speed, p.HasSpeed = float64(speed)*knotsToKmh, true
	p.Heading, p.HasHeading = float64(course), true
	if level, ok := h02Battery(battery); ok {
		setNum(p, attrBatteryLevel, float64(level))
	}
	h02Status(p, status)
	if !usable(p) {
		dropPosition(m)
		return nil
	}
	m.Kind = KindPositions
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
