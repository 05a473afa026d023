// Package teltonika decodes Teltonika's AVL protocol (FMB, FMC, FMM... trackers):
// codecs 8, 8 Extended and 16, the older GH3000 codec 7, and the command
// responses of codecs 12, 13 and 14, over TCP and UDP.
//
// TCP: the device logs in with its IMEI (`00 0F` and 15 ASCII digits; any
// length of 1 to 255 printable characters is taken), the server answers
// `01` (`00` refuses). Then each data frame is `00000000`, the length of
// codec..N2 (4 bytes), the codec, the record count N, N records, N again,
// and a CRC-16/ARC of codec..N2 in 4 bytes; the server acknowledges with N
// in 4 bytes once the records are stored. A lone `FF` is a keep-alive.
//
// UDP: each datagram is `length(2) packetId(2) packetType(1)
// avlPacketId(1) imeiLength(2) IMEI codec N records N`, without CRC; the
// server answers `00 05 packetId 01 avlPacketId N`.
//
// A record: time (ms since 1970, 8 bytes), priority, longitude and latitude
// (int32, 1e-7 degrees), altitude (int16, m), angle (U16, degrees),
// satellites (U8), speed (U16, km/h), the event I/O id, then the I/O
// elements in groups of 1-, 2-, 4- and 8-byte values (codec 8: one byte
// ids and counts; 8E: two bytes, and a last group of variable-length
// values; 16: two-byte ids, a generation-type byte after the event id),
// and on devices set up for it a group of 16-byte values, recognised by
// the records parsing with it and not without.
// A position is valid when it has satellites (Traccar's rule). The I/O
// elements API.md §14 names are attributes of the common vocabulary, in
// its units (ignition, motion, power_v and battery_v in volts,
// odometer_km, engine_hours, fuel_l, driver_identifier, alarm...: see
// tkElement and docs/telematics.md); the others are "io" and their id,
// without a string each. Each record also carries its priority and its
// event (the id of the element that triggered it, as text: "0" for a
// periodic record).
//
// Decoding a frame allocates nothing once the Message has held a frame as
// large (BenchmarkTeltonikaDecode10, BenchmarkTeltonikaVocabulary);
// strings are made only for values that are strings (a login's IMEI, a
// VIN, variable-length elements, a driver's key the connection has not
// sent before, a second alarm in one record).
//
// Decoder is its devproto.Decoder, which the listeners of fleetdevice
// serve (fleetdevice.Protocols). Commands to devices go the other way:
// Encoder (encode.go) turns a command into the codec 12 frame the device
// reads, and the Decoder reads the device's codec 12 response as the
// command's result.
package teltonika

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Decoder decodes the teltonika protocol's frames (TCP) and datagrams (UDP).
// It holds no state: the zero value is ready, and one serves every
// connection.
type Decoder struct{}

func (Decoder) Name() string  { return "teltonika" }
func (Decoder) MaxFrame() int { return tkMaxFrame }

const tkMaxFrame = 65536

// Teltonika's codecs.
const (
	tkCodecGH3000 = 0x07
	tkCodec8      = 0x08
	tkCodec8E     = 0x8E
	tkCodec12     = 0x0C
	tkCodec13     = 0x0D
	tkCodec14     = 0x0E
	tkCodec16     = 0x10
)

func tkKnownCodec(c byte) bool {
	switch c {
	case tkCodecGH3000, tkCodec8, tkCodec8E, tkCodec12, tkCodec13, tkCodec14, tkCodec16:
		return true
	}
	return false
}

// tkIDByte reports whether c may be part of a login's identifier.
func tkIDByte(c byte) bool { return c > ' ' && c < 0x7F }

// Split finds a keep-alive (`FF`), a login (`00 LL` and LL characters) or
// a data frame (`00000000`, length, codec...) at the start of buf.
func (Decoder) Split(buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	switch buf[0] {
	case 0xFF:
		return 1, nil
	case 0x00:
	default:
		return 0, devproto.ErrGarbage
	}
	if len(buf) < 2 {
		return 0, nil
	}
	if n := int(buf[1]); n != 0 {
		end := 2 + n
		for i := 2; i < len(buf) && i < end; i++ {
			if !tkIDByte(buf[i]) {
				return 0, devproto.ErrGarbage
			}
		}
		if len(buf) < end {
			return 0, nil
		}
		return end, nil
	}
	for i := 2; i < 4 && i < len(buf); i++ {
		if buf[i] != 0 {
			return 0, devproto.ErrGarbage
		}
	}
	if len(buf) < 8 {
		return 0, nil
	}
	l := devproto.BE32(buf[4:])
	if l < 3 || l > tkMaxFrame-12 {
		return 0, devproto.ErrGarbage
	}
	if len(buf) > 8 && !tkKnownCodec(buf[8]) {
		return 0, devproto.ErrGarbage
	}
	if total := 12 + int(l); len(buf) >= total {
		return total, nil
	}
	return 0, nil
}

// Decode decodes a keep-alive, a login or a data frame (TCP), or a
// datagram (UDP).
func (Decoder) Decode(frame []byte, s *devproto.Session, m *devproto.Message) error {
	if s.Transport == devproto.UDP {
		return tkDecodeUDP(frame, s, m)
	}
	if len(frame) == 1 && frame[0] == 0xFF {
		m.Kind = devproto.KindHeartbeat
		return nil
	}
	if len(frame) < 3 || frame[0] != 0 {
		return devproto.ErrGarbage
	}
	if n := int(frame[1]); n != 0 {
		if len(frame) != 2+n {
			return devproto.ErrGarbage
		}
		id := frame[2:]
		for _, c := range id {
			if !tkIDByte(c) {
				return devproto.ErrGarbage
			}
		}
		m.Kind = devproto.KindLogin
		m.Identifier = devproto.IdentifierOf(id, s.Identifier)
		s.Identifier = m.Identifier
		m.Reply = append(m.Reply[:0], 1)
		m.Reject = append(m.Reject[:0], 0)
		return nil
	}
	if len(frame) < 12 || frame[2] != 0 || frame[3] != 0 || !tkKnownCodec(frame[8]) {
		return devproto.ErrGarbage
	}
	// A frame whose length does not match what arrived cannot be
	// verified: like one whose CRC fails, it is not acknowledged.
	l := uint64(devproto.BE32(frame[4:]))
	if l+12 != uint64(len(frame)) {
		return devproto.ErrChecksum
	}
	body := frame[8 : 8+l]
	if uint32(devproto.CRC16ARC(body)) != devproto.BE32(frame[8+l:]) {
		return devproto.ErrChecksum
	}
	n, ack, err := tkDecodeData(body, m)
	if err != nil {
		return err
	}
	if ack {
		m.Reply = append(m.Reply[:0], 0, 0, 0, n)
	}
	return nil
}

// tkDecodeUDP decodes a datagram: its header names the device, and the
// reply echoes its packet ids.
func tkDecodeUDP(d []byte, s *devproto.Session, m *devproto.Message) error {
	r := devproto.BinReader{Buf: d}
	r.U16() // length (Traccar does not rely on it, nor do we)
	packetID := r.Take(2)
	r.U8() // packet type
	avlID := r.U8()
	imei := r.Take(int(r.U16()))
	if r.Bad || len(imei) == 0 || len(imei) > 64 || r.Left() < 3 || !tkKnownCodec(d[r.Off]) {
		return devproto.ErrGarbage
	}
	for _, c := range imei {
		if !tkIDByte(c) {
			return devproto.ErrGarbage
		}
	}
	n, ack, err := tkDecodeData(d[r.Off:], m)
	if err != nil {
		return err
	}
	m.Identifier = devproto.IdentifierOf(imei, s.Identifier)
	if ack {
		m.Reply = append(m.Reply[:0], 0x00, 0x05, packetID[0], packetID[1], 0x01, avlID, n)
	}
	return nil
}

// tkDecodeData decodes codec, N, the records and N again (the whole of
// body), and returns N and whether the frame is acknowledged (data
// frames are, command responses are not).
func tkDecodeData(body []byte, m *devproto.Message) (n byte, ack bool, err error) {
	if len(body) < 3 {
		return 0, false, devproto.ErrGarbage
	}
	codec, n := body[0], body[1]
	if body[len(body)-1] != n {
		return 0, false, devproto.ErrGarbage
	}
	switch codec {
	case tkCodec12:
		// A command's response: no position.
		m.Kind = devproto.KindOther
		tkCodec12Answer(body, m)
		return n, false, nil
	case tkCodec13, tkCodec14:
		// A device's own message (or a camera's data): no position.
		m.Kind = devproto.KindOther
		return n, false, nil
	case tkCodecGH3000, tkCodec8, tkCodec8E, tkCodec16:
	default:
		return 0, false, devproto.ErrGarbage
	}
	m.Kind = devproto.KindPositions
	records := body[2 : len(body)-1]
	if tkRecords(records, codec, int(n), false, m) {
		return n, true, nil
	}
	// Devices configured for it add a group of 16-byte elements after the
	// 8-byte group (Traccar's "extended" setting): when the records do
	// not parse without it, they are read again with it.
	if codec != tkCodecGH3000 && tkRecords(records, codec, int(n), true, m) {
		return n, true, nil
	}
	return 0, false, devproto.ErrGarbage
}

// tkRecords decodes n records that make up the whole of b, or reports
// false (and leaves no position) when they do not.
func tkRecords(b []byte, codec byte, n int, extended bool, m *devproto.Message) bool {
	m.Positions = m.Positions[:0]
	r := devproto.BinReader{Buf: b}
	for i := 0; i < n; i++ {
		var ok bool
		if codec == tkCodecGH3000 {
			ok = tkRecordGH3000(&r, m)
		} else {
			ok = tkRecord(&r, codec, extended, m)
		}
		if !ok {
			m.Positions = m.Positions[:0]
			return false
		}
	}
	if r.Left() != 0 {
		m.Positions = m.Positions[:0]
		return false
	}
	return true
}

// tkRecord decodes one record of codec 8, 8E or 16 into a new position (or
// none, when its coordinates are not on Earth). It reports false when the
// record runs past the frame.
func tkRecord(r *devproto.BinReader, codec byte, extended bool, m *devproto.Message) bool {
	wide := codec == tkCodec8E // two-byte counts
	wideID := wide || codec == tkCodec16
	p := devproto.NextPosition(m)

	ms := r.U64()
	priority := r.U8()
	lon := float64(int32(r.U32())) / 1e7
	lat := float64(int32(r.U32())) / 1e7
	alt := int16(r.U16())
	angle := r.U16()
	sats := r.U8()
	speed := r.U16()
	event := r.U8or16(wideID)
	if codec == tkCodec16 {
		r.U8() // generation type
	}
	r.U8or16(wide) // total count of I/O elements
	if r.Bad {
		return false
	}
	*p = devproto.Position{
		Time:      time.UnixMilli(int64(ms)).UTC(),
		Latitude:  lat,
		Longitude: lon,
		Speed:     float64(speed), HasSpeed: true,
		Heading: float64(angle), HasHeading: true,
		Altitude: float64(alt), HasAltitude: true,
		Satellites: int(sats), HasSatellites: true,
		Valid: sats != 0,
		Attrs: p.Attrs,
	}
	devproto.AddNum(p, "priority", float64(priority))
	p.Attrs = devproto.AppendAttr(p.Attrs, devproto.Attribute{Key: devproto.AttrEvent, Kind: devproto.AttrString, Str: devproto.CodeString(event)})
	st := tkState{alarm: -1, odometer: -1, hours: -1, m: m}

	attrs := p.Attrs // kept in a register across the elements
	idSize := 1
	if wideID {
		idSize = 2
	}
	for _, size := range [4]int{1, 2, 4, 8} {
		// A group's elements are read from its bytes, taken at once.
		count := r.U8or16(wide)
		g := r.Take(count * (idSize + size))
		if r.Bad {
			return false
		}
		for k := 0; k+idSize+size <= len(g); k += idSize + size {
			id := int(g[k])
			if wideID {
				id = id<<8 | int(g[k+1])
			}
			e := g[k+idSize : k+idSize+size]
			var v uint64
			switch size {
			case 1:
				v = uint64(e[0])
			case 2:
				v = uint64(binary.BigEndian.Uint16(e))
			case 4:
				v = uint64(binary.BigEndian.Uint32(e))
			default:
				v = binary.BigEndian.Uint64(e)
			}
			// The most common elements here, the others in tkElement:
			// a call per element costs as much as naming it.
			if id < len(tkNames) {
				e := &tkNames[id]
				switch e.op {
				case tkUnsigned:
					n := float64(tkField(v, size, int(e.width)))
					if e.div != 1 { // a division costs more than the branch
						n /= e.div
					}
					attrs = devproto.AppendAttr(attrs, devproto.Attribute{Key: e.name, Kind: devproto.AttrNumber, Num: n})
					continue
				case tkBool:
					attrs = devproto.AppendAttr(attrs, devproto.Attribute{Key: e.name, Kind: devproto.AttrBool, Num: float64(min(tkField(v, size, int(e.width)), 1))})
					continue
				case tkNumbered:
				default:
					attrs = tkElement(attrs, &st, id, size, v, e)
					continue
				}
			}
			// Numbered: unsigned as Traccar reads it, an 8-byte value
			// signed.
			if x := int64(v); x <= 1<<53 && x >= -(1<<53) {
				attrs = devproto.AppendAttr(attrs, devproto.Attribute{IO: id, Kind: devproto.AttrNumber, Num: float64(x)})
			} else {
				attrs = tkBig(attrs, st.m, id, x)
			}
		}
	}
	p.Attrs = attrs
	if extended {
		count := r.U8or16(wide)
		for j := 0; j < count; j++ {
			id := r.U8or16(wideID)
			v := r.Take(16)
			if r.Bad {
				return false
			}
			p.Attrs = devproto.AppendAttr(p.Attrs, devproto.Attribute{IO: id, Kind: devproto.AttrString, Str: devproto.Hex(v)})
		}
	}
	if wide {
		count := int(r.U16())
		for j := 0; j < count; j++ {
			id := int(r.U16())
			v := r.Take(int(r.U16()))
			if r.Bad {
				return false
			}
			tkVariable(p, id, v)
		}
	}
	if r.Bad {
		return false
	}
	if !devproto.OnEarth(lat, lon) {
		devproto.DropPosition(m)
	}
	return true
}

// tkField is the value Traccar reads for an element of size bytes with a
// reader of width bytes: the first width bytes of it.
func tkField(v uint64, size, width int) uint64 {
	if width < size {
		return v >> (8 * (size - width))
	}
	return v
}

// tkState is what the decoding of a record remembers between its
// elements: where its alarm, odometer and engine hours are, so that an
// alarm joins the others and the vehicle's own count (CAN) prevails over
// the device's whatever their order.
type tkState struct {
	alarm                     int // the index of the alarm attribute, -1 before one
	odometer, hours           int // the index of odometer_km, engine_hours, -1 before one
	odometerCAN, hoursVehicle bool
	m                         *devproto.Message // for the strings it keeps
}

// prefer sets the number key at *at of attrs (-1: adds it), unless the
// value there came from a preferred source (*had) and this one does not.
func (st *tkState) prefer(attrs []devproto.Attribute, at *int, had *bool, key string, v float64, preferred bool) []devproto.Attribute {
	switch {
	case *at < 0:
		*at = len(attrs)
		attrs = devproto.AppendAttr(attrs, devproto.Attribute{Key: key, Kind: devproto.AttrNumber, Num: v})
	case preferred || !*had:
		attrs[*at].Num = v
	default:
		return attrs
	}
	*had = preferred
	return attrs
}

// tkOp is what the decoder does with an I/O element API.md §14 names.
type tkOp uint8

const (
	tkNumbered tkOp = iota // no common name: "io" and the id
	tkUnsigned             // a number: the unsigned value / div
	tkSigned8              // a number: the signed byte / div
	tkBool                 // a boolean: the value > 0
	tkAlarmSet             // the alarm word when the value > 0
	tkAlarmOne             // the alarm word when the value is 1
	tkSpecial              // more than a number: tkElement by the id
)

// tkName is the common name of an I/O element and how its value becomes
// the attribute: width is the bytes Traccar reads of it (the first width
// bytes of the element), div what the value is divided by.
type tkName struct {
	op    tkOp
	width uint8
	div   float64
	name  string
}

// tkNames is API.md §14's table of Teltonika's I/O elements (FMB, FMC,
// FMM families), indexed by id: the common name, the unit's conversion,
// and the bytes Traccar's decoder reads of each
// (TeltonikaProtocolDecoder.java:188-293 at 9e5c458ad0bf, which names
// the same elements, some only for the models a server is told; the
// table here is for any model). A fixed array and string constants, so
// that naming an element is an index and allocates nothing.
var tkNames = func() (t [256]tkName) {
	num := func(id int, width uint8, div float64, name string) { t[id] = tkName{tkUnsigned, width, div, name} }
	for i := range 4 {
		t[1+i] = tkName{tkBool, 1, 1, devproto.AttrDin[i]} // digital inputs
	}
	num(9, 2, 1000, devproto.AttrAin[0]) // analogue inputs, mV (11 is the SIM's ICCID: numbered)
	num(10, 2, 1000, devproto.AttrAin[1])
	t[16] = tkName{tkSpecial, 4, 1000, devproto.AttrOdometerKm} // total odometer, m (the device's)
	num(21, 1, 1, devproto.AttrRSSI)
	t[32] = tkName{tkSigned8, 1, 1, devproto.AttrCoolantTempC} // °C
	num(66, 2, 1000, devproto.AttrPowerV)                      // external voltage, mV
	num(67, 2, 1000, devproto.AttrBatteryV)                    // battery voltage, mV
	for i := range 4 {
		t[72+i] = tkName{tkSpecial, 4, 10, devproto.AttrTempC[i]} // Dallas temperatures, 0.1 °C
	}
	t[78] = tkName{tkSpecial, 8, 1, devproto.AttrDriverIdentifier} // iButton
	num(81, 1, 1, devproto.AttrOBDSpeedKmh)                        // km/h
	num(83, 4, 10, devproto.AttrFuelUsedL)                         // 0.1 l
	num(84, 2, 10, devproto.AttrFuelL)                             // 0.1 l
	num(85, 2, 1, devproto.AttrRPM)
	t[87] = tkName{tkSpecial, 4, 1000, devproto.AttrOdometerKm} // total mileage from the CAN bus, m
	num(89, 1, 1, devproto.AttrFuelLevel)                       // %
	t[102] = tkName{tkSpecial, 4, 60, devproto.AttrEngineHours} // engine worktime, minutes
	t[103] = tkName{tkSpecial, 4, 60, devproto.AttrEngineHours} // engine worktime counted, minutes
	num(113, 1, 1, devproto.AttrBatteryLevel)                   // %
	t[179] = tkName{tkBool, 1, 1, devproto.AttrDout[0]}
	t[180] = tkName{tkBool, 1, 1, devproto.AttrDout[1]}
	num(181, 2, 10, devproto.AttrPDOP)
	num(182, 2, 10, devproto.AttrHDOP)
	num(199, 4, 1000, devproto.AttrTripOdometerKm) // m
	t[239] = tkName{tkBool, 1, 1, devproto.AttrIgnition}
	t[240] = tkName{tkBool, 1, 1, devproto.AttrMotion}
	// Alarms (the word is the name).
	t[236] = tkName{tkAlarmSet, 1, 1, devproto.AlarmGeneral}   // alarm
	t[246] = tkName{tkAlarmSet, 1, 1, devproto.AlarmTow}       // towing
	t[247] = tkName{tkAlarmSet, 1, 1, devproto.AlarmAccident}  // crash detection
	t[249] = tkName{tkAlarmOne, 1, 1, devproto.AlarmJamming}   // jamming: 1 started, 0 ended
	t[252] = tkName{tkAlarmOne, 1, 1, devproto.AlarmPowerCut}  // unplug: 1 power cut, 0 present
	t[253] = tkName{tkSpecial, 1, 1, ""}                       // green driving
	t[255] = tkName{tkAlarmSet, 1, 1, devproto.AlarmOverspeed} // overspeeding (the value is the speed)
	return t
}()

// tkElement adds the I/O element id of size bytes and value v to attrs,
// a position's, by its name e in the common vocabulary, in its unit, for
// the elements tkRecord does not add itself (it adds the plain numbers
// and booleans, and those with no common name).
func tkElement(attrs []devproto.Attribute, st *tkState, id, size int, v uint64, e *tkName) []devproto.Attribute {
	x := tkField(v, size, int(e.width))
	switch e.op {
	case tkSigned8:
		return devproto.AppendAttr(attrs, devproto.Attribute{Key: e.name, Kind: devproto.AttrNumber, Num: float64(int8(x)) / e.div})
	case tkAlarmSet:
		if x > 0 {
			attrs = devproto.AppendAlarm(attrs, &st.alarm, e.name)
		}
		return attrs
	case tkAlarmOne:
		if x == 1 {
			attrs = devproto.AppendAlarm(attrs, &st.alarm, e.name)
		}
		return attrs
	}
	switch id {
	case 16, 87:
		return st.prefer(attrs, &st.odometer, &st.odometerCAN, e.name, float64(x)/e.div, id == 87)
	case 102, 103:
		return st.prefer(attrs, &st.hours, &st.hoursVehicle, e.name, float64(x)/e.div, id == 102)
	case 72, 73, 74, 75:
		// Signed. Outside the sensors' range (-55 to 125 °C) the value is
		// a status (3000 not ready, 4000 not found, 5000 failed...), not a
		// temperature: it stays numbered.
		if t := int32(x); t >= -550 && t <= 1250 {
			return devproto.AppendAttr(attrs, devproto.Attribute{Key: e.name, Kind: devproto.AttrNumber, Num: float64(t) / e.div})
		}
		return devproto.AppendAttr(attrs, devproto.Attribute{IO: id, Kind: devproto.AttrNumber, Num: float64(v)})
	case 78:
		// 8 bytes little-endian, in hexadecimal as Traccar writes it; 0
		// is no key.
		if size == 8 && v != 0 {
			attrs = devproto.AppendAttr(attrs, devproto.Attribute{Key: e.name, Kind: devproto.AttrString, Str: tkHexUpper(st.m, bits.ReverseBytes64(v))})
		}
	case 253:
		switch x {
		case 1:
			attrs = devproto.AppendAlarm(attrs, &st.alarm, devproto.AlarmHardAcceleration)
		case 2:
			attrs = devproto.AppendAlarm(attrs, &st.alarm, devproto.AlarmHardBraking)
		case 3:
			attrs = devproto.AppendAlarm(attrs, &st.alarm, devproto.AlarmHardCornering)
		}
	}
	return attrs
}

// tkBig adds a numbered element whose value a float64 would not hold
// exactly (11, the SIM's ICCID) as its decimal text, the string the
// connection made last time when it is the same value.
func tkBig(attrs []devproto.Attribute, m *devproto.Message, id int, x int64) []devproto.Attribute {
	s := m.InternNumber(uint64(x), 'd', func(b []byte) []byte { return strconv.AppendInt(b, x, 10) })
	return devproto.AppendAttr(attrs, devproto.Attribute{IO: id, Kind: devproto.AttrString, Str: s})
}

// tkHexUpper is v as 16 upper-case hexadecimal digits (Traccar's form of
// an iButton), the string m made last time when it is the same.
func tkHexUpper(m *devproto.Message, v uint64) string {
	return m.InternNumber(v, 'X', func(b []byte) []byte {
		const digits = "0123456789ABCDEF"
		for i := 60; i >= 0; i -= 4 {
			b = append(b, digits[v>>uint(i)&15])
		}
		return b
	})
}

// tkVariable adds an element of codec 8E's variable-length group: a VIN,
// the trouble codes, Bluetooth beacons and tags by Traccar's names in
// snake_case (values Fleet reads out of the element, not the element's
// value), or the bytes in hexadecimal, numbered ("io" and id). A value
// longer than an attribute holds (64 characters) is left out.
func tkVariable(p *devproto.Position, id int, v []byte) {
	switch id {
	case 256, 325:
		devproto.AddStr(p, "vin", string(v))
	case 281:
		devproto.AddStr(p, "dtcs", strings.ReplaceAll(string(v), ",", " "))
	case 385:
		tkBeacons(p, v)
	case 548, 10828, 10829, 10831, 11317:
		tkTags(p, v)
	default:
		if 2*len(v) <= devproto.AttrMaxText {
			p.Attrs = devproto.AppendAttr(p.Attrs, devproto.Attribute{IO: id, Kind: devproto.AttrString, Str: devproto.Hex(v)})
		}
	}
}

// tkBeacons adds the beacons an element 385 lists (iBeacon or Eddystone):
// beacon1_uuid, beacon1_major, beacon1_minor or beacon1_namespace,
// beacon1_instance; beacon1_rssi, beacon1_battery, beacon1_temp...
func tkBeacons(p *devproto.Position, v []byte) {
	r := devproto.BinReader{Buf: v}
	r.U8() // data part
	for i := 1; r.Left() > 0 && !r.Bad; i++ {
		name := func(s string) string { return "beacon" + strconv.Itoa(i) + "_" + s }
		flags := r.U8()
		if flags>>4 > 0 {
			uuid := r.Take(16)
			major, minor := r.U16(), r.U16()
			if r.Bad {
				return
			}
			devproto.AddStr(p, name("uuid"), devproto.Hex(uuid))
			devproto.AddNum(p, name("major"), float64(major))
			devproto.AddNum(p, name("minor"), float64(minor))
		} else {
			namespace, instance := r.Take(10), r.Take(6)
			if r.Bad {
				return
			}
			devproto.AddStr(p, name("namespace"), devproto.Hex(namespace))
			devproto.AddStr(p, name("instance"), devproto.Hex(instance))
		}
		if rssi := int8(r.U8()); !r.Bad {
			devproto.AddNum(p, name("rssi"), float64(rssi))
		}
		if flags&2 != 0 {
			if battery := r.U16(); !r.Bad {
				devproto.AddNum(p, name("battery"), float64(battery)/100)
			}
		}
		if flags&4 != 0 {
			if temp := r.U16(); !r.Bad {
				devproto.AddNum(p, name("temp"), float64(temp))
			}
		}
	}
}

// tkTags adds the Bluetooth tags (EYE sensors...) an element 548 and its
// kin list, each a sequence of parameters: tag1_rssi, tag1_id,
// tag1_low_battery, tag1_voltage, tag1_name, tag1_temp, tag1_humidity...
func tkTags(p *devproto.Position, v []byte) {
	r := devproto.BinReader{Buf: v}
	r.U8() // header
	for i := 1; r.Left() > 0 && !r.Bad; i++ {
		name := func(s string) string { return "tag" + strconv.Itoa(i) + "_" + s }
		tag := devproto.BinReader{Buf: r.Take(int(r.U8()))}
		for tag.Left() > 0 && !tag.Bad {
			id := tag.U8()
			value := devproto.BinReader{Buf: tag.Take(int(tag.U8()))}
			if tag.Bad {
				break
			}
			switch id {
			case 0:
				devproto.AddNum(p, name("rssi"), float64(int8(value.U8())))
			case 1:
				devproto.AddStr(p, name("id"), devproto.Hex(value.Buf))
			case 2:
				flags := value.U8()
				if flags&(1<<6) != 0 {
					devproto.AddBool(p, name("low_battery"), true)
				}
				if flags&(1<<7) != 0 {
					devproto.AddNum(p, name("voltage"), float64(value.U8())*10+2000)
				}
			case 5:
				devproto.AddStr(p, name("name"), strings.TrimRight(string(value.Buf), "\x00"))
			case 6:
				devproto.AddNum(p, name("temp"), float64(int16(value.U16())))
			case 7:
				devproto.AddNum(p, name("humidity"), float64(value.U8()))
			case 8:
				devproto.AddBool(p, name("magnet"), value.U8() > 0)
			case 9:
				devproto.AddBool(p, name("motion"), value.U8() > 0)
			case 10:
				devproto.AddNum(p, name("motion_count"), float64(value.U16()))
			case 11:
				devproto.AddNum(p, name("pitch"), float64(int8(value.U8())))
			case 12:
				devproto.AddNum(p, name("angle_roll"), float64(int16(value.U16())))
			case 13:
				devproto.AddNum(p, name("low_battery"), float64(value.U8()))
			case 14:
				devproto.AddNum(p, name("battery"), float64(value.U16()))
			case 15:
				if mac := value.Take(6); mac != nil {
					devproto.AddStr(p, name("mac"), devproto.Hex(mac))
				}
			}
		}
	}
}

// tkGH3000Epoch is the origin of codec 7's times, 2007-01-01 UTC.
const tkGH3000Epoch = 1167609600

// tkRecordGH3000 decodes one record of codec 7 (GH3000): a time in seconds
// since 2007, a mask of the groups present, a location whose fields are
// present by a mask of their own, and I/O groups of 1, 2 and 4 bytes. A
// record without a location (only I/O values) gives no position.
func tkRecordGH3000(r *devproto.BinReader, m *devproto.Message) bool {
	p := devproto.NextPosition(m)
	t := int64(r.U32()&0x3FFFFFFF) + tkGH3000Epoch
	global := r.U8()
	located := false
	if global&1 != 0 {
		mask := r.U8()
		*p = devproto.Position{Time: time.Unix(t, 0).UTC(), Valid: true, Attrs: p.Attrs}
		if mask&1 != 0 {
			p.Latitude = float64(math.Float32frombits(r.U32()))
			p.Longitude = float64(math.Float32frombits(r.U32()))
			located = devproto.Finite(p.Latitude) && devproto.Finite(p.Longitude) && devproto.OnEarth(p.Latitude, p.Longitude)
		}
		if mask&2 != 0 {
			p.Altitude, p.HasAltitude = float64(r.U16()), true
		}
		if mask&4 != 0 {
			p.Heading, p.HasHeading = float64(r.U8())*360/256, true
		}
		if mask&8 != 0 {
			p.Speed, p.HasSpeed = float64(r.U8()), true
		}
		if mask&16 != 0 {
			p.Satellites, p.HasSatellites = int(r.U8()), true
		}
		if mask&32 != 0 {
			r.U16() // location area code
			r.U16() // cell id
			if mask&64 != 0 {
				r.U8() // signal strength
			}
			if mask&128 != 0 {
				r.U32() // operator
			}
		} else {
			if mask&64 != 0 {
				devproto.AddNum(p, devproto.AttrRSSI, float64(r.U8()))
			}
			if mask&128 != 0 {
				devproto.AddNum(p, "operator", float64(r.U32()))
			}
		}
	} else {
		*p = devproto.Position{Attrs: p.Attrs}
	}
	alarm := -1
	for i, size := range [3]int{1, 2, 4} {
		if global&(2<<i) == 0 {
			continue
		}
		count := int(r.U8())
		for j := 0; j < count; j++ {
			id := int(r.U8())
			v := r.UN(size)
			if r.Bad {
				return false
			}
			tkElementGH3000(p, &alarm, id, v)
		}
	}
	if r.Bad {
		return false
	}
	if !located {
		devproto.DropPosition(m)
	}
	return true
}

// tkElementGH3000 adds an I/O element of codec 7 (GH3000 personal
// trackers, whose ids are not the FMB families' of API.md §14): by the
// common name of what Traccar's decoder names it
// (TeltonikaProtocolDecoder.java:294-313), else numbered.
func tkElementGH3000(p *devproto.Position, alarm *int, id int, v uint64) {
	switch id {
	case 1:
		devproto.AddNum(p, devproto.AttrBatteryLevel, float64(v))
	case 20:
		devproto.AddNum(p, devproto.AttrHDOP, float64(v)/10)
	case 22:
		devproto.AddNum(p, devproto.AttrPDOP, float64(v)/10)
	case 67:
		devproto.AddNum(p, devproto.AttrBatteryV, float64(v)/1000)
	case 222:
		if v == 1 {
			devproto.AddAlarmAt(p, alarm, devproto.AlarmSOS)
		}
	case 240:
		devproto.AddBool(p, devproto.AttrMotion, v == 1)
	default:
		// 2 (USB connected), 5 (uptime), 21 (vdop), 221 (button), 244
		// (roaming) have no common name.
		devproto.AddIO(p, id, int64(v))
	}
}
