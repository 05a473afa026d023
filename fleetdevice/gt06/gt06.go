// Package gt06 decodes the GT06 protocol of Concox, Jimi and many other trackers
// (GT06N, JM-VL01, GV20, WeTrack...), over TCP.
//
// A frame is `78 78`, its length (one byte: type..CRC), the type, the
// data, a serial number (2 bytes), a CRC-16/X-25 of length..serial, and
// `0D 0A`; `79 79` frames have a two-byte length. The device logs in with
// type 0x01 (its IMEI in BCD, and on some a time zone), and the server
// acknowledges that and nearly every other frame with `78 78 05 type
// serial CRC 0D 0A` (a few with the `79 79` form, a few not at all, as
// Traccar does). The position frames start with the GPS block: date and
// time (YY MM DD hh mm ss, in the device's time zone when its login gave
// one, else UTC), satellites (low nibble), latitude and longitude (U32,
// 1/1,800,000 of a degree), speed (km/h) and a U16 of course (bits 0–9),
// north (10), west (11), fix (12) and ignition (14: known, 15: on); a
// cell (LBS) block and a status block follow on most. The status values
// Traccar reads become attributes by its names (ignition, status, charge,
// blocked, batteryLevel, rssi, alarm, archive, odometer, power...).
//
// Frames whose length does not end on `0D 0A` are cut at the first
// `0D 0A`, as Traccar does for devices that miscount; they must still
// carry a valid CRC, except the Wi-Fi frames (0x17, 0x69), which hold the
// count of access points in place of the length and no CRC, and are
// checked by their structure instead.
//
// Decoder is its devproto.Decoder, which the listeners of fleetdevice
// serve (fleetdevice.Protocols). Commands to devices go the other way:
// Encoder (encode.go) turns a command into the 0x80 frame the device
// reads, and the Decoder reads the device's 0x15 or 0x21 answer as the
// command's result.
package gt06

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Decoder decodes the gt06 protocol's frames (TCP).
// It holds no state: the zero value is ready, and one serves every
// connection.
type Decoder struct{}

func (Decoder) Name() string  { return "gt06" }
func (Decoder) MaxFrame() int { return gtMaxFrame }

const gtMaxFrame = 2048

// Message types, by Traccar's names.
const (
	gtLogin           = 0x01
	gtGPS             = 0x10
	gtGPSLBS6         = 0x11
	gtGPSLBS1         = 0x12
	gtStatus          = 0x13
	gtString          = 0x15
	gtGPSLBSStatus1   = 0x16
	gtWifi            = 0x17 // also GPS_LBS_RFID
	gtLBSExtend       = 0x18
	gtLBSStatus       = 0x19
	gtGPSPhone        = 0x1A
	gtGPSLBSExtend    = 0x1E
	gtStringInfo      = 0x21
	gtGPSLBS2         = 0x22
	gtHeartbeat       = 0x23
	gtLBSMultiple3    = 0x24
	gtGPSLBSDriver    = 0x25
	gtGPSLBSStatus2   = 0x26
	gtGPSLBSStatus3   = 0x27
	gtLBSMultiple1    = 0x28
	gtAddressRequest  = 0x2A
	gtLBSWifi         = 0x2C
	gtGPSLBS4         = 0x2D
	gtLBSMultiple2    = 0x2E
	gtGPSLBS5         = 0x31
	gtGPSLBSStatus4   = 0x32 // also AZ735_GPS (79 79)
	gtWifi5           = 0x33 // also AZ735_ALARM (79 79)
	gtX1GPS           = 0x34 // also LBS_3 (SL4X)
	gtX1PhotoInfo     = 0x35
	gtStatus2         = 0x36 // also X1_PHOTO_DATA, LOCATION_RFID (TRX16i)
	gtGPSLBS3         = 0x37
	gtGPSLBS8         = 0x38
	gtAlarmModule     = 0x39
	gtBMS             = 0x40
	gtMultimedia      = 0x41
	gtIButton         = 0x61
	gtWifi2           = 0x69
	gtGPSModular      = 0x70
	gtCommand0        = 0x80
	gtCommand1        = 0x81
	gtCommand2        = 0x82
	gtTimeRequest     = 0x8A
	gtOBD             = 0x8C
	gtInfo            = 0x94
	gtAlarm           = 0x95
	gtAddressResponse = 0x97
	gtSerial          = 0x9B
	gtGPSLBS7         = 0xA0
	gtLBS2            = 0xA1
	gtWifi3           = 0xA2 // also GPS_LBS_STATUS_5 (LW4G)
	gtFenceSingle     = 0xA3 // also STATUS_3 (SeeWorld)
	gtFenceMulti      = 0xA4
	gtLBSAlarm        = 0xA5
	gtLBSAddress      = 0xA7
	gtWifiAlarm       = 0xA9
	gtBluetoothClock  = 0xB2
	gtDeviceStatus    = 0xF1
	gtPeripheral      = 0xF2
	gtWifi4           = 0xF3
)

// gtVariant is a family of devices whose frames of a type differ, told
// apart by the type and the length as Traccar does.
type gtVariant uint8

const (
	gtStandard gtVariant = iota
	gtVXT01
	gtWanwayS20
	gtSR411Mini
	gtGT06ECard
	gtBenway
	gtS5
	gtSpace10X
	gtOBD6
	gtWeTrust
	gtJC400
	gtSL4X
	gtSeeWorld
	gtRFID
	gtLW4G
	gtTRX16I
)

func gtVariantOf(ext bool, length int, typ byte, frame []byte) gtVariant {
	if ext {
		return gtStandard
	}
	switch {
	case typ == gtGPSLBS1 && length == 0x24, typ == gtGPSLBSStatus1 && length == 0x24:
		return gtVXT01
	case typ == gtLBSMultiple3 && length == 0x31:
		return gtWanwayS20
	case typ == gtLBSMultiple3 && length == 0x2E:
		return gtSR411Mini
	case typ == gtGPSLBS1 && length >= 0x71:
		return gtGT06ECard
	case typ == gtGPSLBS1 && length == 0x21:
		return gtBenway
	case typ == gtGPSLBS1 && length == 0x2B:
		return gtS5
	case typ == gtLBSStatus && length >= 0x17:
		return gtSpace10X
	case typ == gtStatus && length == 0x13:
		return gtOBD6
	case typ == gtGPSLBS1 && length == 0x29:
		return gtWeTrust
	case typ == gtAlarm && len(frame) >= 6 && frame[4] == 0xFF && frame[5] == 0xFF:
		return gtJC400
	case typ == gtX1GPS && length == 0x37, typ == gtGPSLBS5 && length == 0x2A,
		typ == gtGPSLBSStatus4 && (length == 0x27 || length == 0x29):
		return gtSL4X
	case typ == gtGPSLBS2 && length == 0x2F, typ == gtGPSLBSStatus1 && length == 0x26,
		typ == gtFenceSingle && (length == 0x0C || length == 0x18):
		return gtSeeWorld
	case typ == gtWifi && length == 0x28:
		return gtRFID
	case typ == gtWifi3 && length == 0x40:
		return gtLW4G
	case typ == gtStatus2 && length == 0x35, typ == gtGPSLBSStatus1 && length == 0x2D:
		return gtTRX16I
	}
	return gtStandard
}

// gtWifiFrame reports whether a 78 78 frame is a Wi-Fi report, whose
// third byte counts access points and which has no serial nor CRC.
func gtWifiFrame(third, typ byte) bool {
	return typ == gtWifi2 || typ == gtWifi && third != 0x28
}

// gtWifiLength returns the length of the Wi-Fi frame at the start of buf
// (time, the access points, the cells), or 0 while buf does not reach the
// count of cells.
func gtWifiLength(buf []byte) int {
	cells := 4 + 6 + 7*int(buf[2])
	if len(buf) <= cells {
		return 0
	}
	return cells + 1 + 3 + 5*int(buf[cells]) + 2
}

// Split finds a frame by its length, or, when the length does not end on
// CR LF, by the first CR LF (as Traccar does).
func (Decoder) Split(buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	if buf[0] != 0x78 && buf[0] != 0x79 {
		return 0, devproto.ErrGarbage
	}
	if len(buf) < 2 {
		return 0, nil
	}
	if buf[1] != buf[0] {
		return 0, devproto.ErrGarbage
	}
	if len(buf) < 5 {
		return 0, nil
	}
	var total int
	switch {
	case buf[0] == 0x79:
		total = 2 + 2 + int(devproto.BE16(buf[2:])) + 2
	case gtWifiFrame(buf[2], buf[3]):
		if total = gtWifiLength(buf); total == 0 {
			return 0, nil
		}
	default:
		total = 2 + 1 + int(buf[2]) + 2
	}
	if total > gtMaxFrame {
		return 0, devproto.ErrGarbage
	}
	if len(buf) < total {
		return 0, nil
	}
	if buf[total-2] == '\r' && buf[total-1] == '\n' {
		return total, nil
	}
	if end := gtCRLF(buf[:min(len(buf), gtMaxFrame)], 4); end > 0 {
		return end, nil
	}
	if len(buf) >= gtMaxFrame {
		return 0, devproto.ErrGarbage
	}
	return 0, nil
}

// gtCRLF returns the end of the first CR LF of b at from or after, or 0.
func gtCRLF(b []byte, from int) int {
	for from+1 < len(b) {
		i := bytes.IndexByte(b[from:len(b)-1], '\r')
		if i < 0 {
			return 0
		}
		i += from
		if b[i+1] == '\n' {
			return i + 2
		}
		from = i + 1
	}
	return 0
}

// gtFrame is one frame being decoded.
type gtFrame struct {
	ext     bool
	length  int // the length field
	typ     byte
	variant gtVariant
	serial  uint16
	r       devproto.BinReader // the data, between the type and the serial
	s       *devproto.Session
	m       *devproto.Message
	// gpsAttrs counts the attributes of the GPS block, which a frame
	// keeps when it ends before the values that follow.
	gpsAttrs int
	// nt: the frame has the layout of NT trackers (Traccar's NT models).
	nt bool
}

// Decode decodes one frame.
func (g Decoder) Decode(frame []byte, s *devproto.Session, m *devproto.Message) error {
	n := len(frame)
	if n < 6 || frame[0] != frame[1] || (frame[0] != 0x78 && frame[0] != 0x79) ||
		frame[n-2] != '\r' || frame[n-1] != '\n' {
		return devproto.ErrGarbage
	}
	f := gtFrame{ext: frame[0] == 0x79, s: s, m: m}
	head := 3
	if f.ext {
		head = 4
		f.length = int(devproto.BE16(frame[2:]))
	} else {
		f.length = int(frame[2])
	}
	if n <= head+2 {
		return devproto.ErrGarbage
	}
	f.typ = frame[head]
	if !f.ext && gtWifiFrame(frame[2], f.typ) {
		return gtDecodeWifi(frame, m)
	}
	if f.length < 5 && head+f.length+2 == n {
		// Too short to hold a serial and a CRC (a bare type, as some
		// devices send): nothing to decode or acknowledge.
		m.Kind = devproto.KindOther
		return nil
	}
	// A frame whose length does not match what arrived (cut at CR LF) or
	// whose CRC fails is not acknowledged.
	if head+f.length+2 != n || devproto.CRC16X25(frame[2:n-4]) != devproto.BE16(frame[n-4:]) {
		return devproto.ErrChecksum
	}
	f.serial = devproto.BE16(frame[n-6:])
	f.r = devproto.BinReader{Buf: frame[head+1 : n-6]}
	f.variant = gtVariantOf(f.ext, f.length, f.typ, frame)
	return f.decode()
}

// gtDecodeWifi decodes a Wi-Fi report (no position: Traccar locates it by
// the last known one), checking its structure, and answers with its time.
func gtDecodeWifi(frame []byte, m *devproto.Message) error {
	if len(frame) < 10 || gtWifiLength(frame) != len(frame) {
		return devproto.ErrGarbage
	}
	m.Kind = devproto.KindOther
	m.Reply = append(m.Reply[:0], 0x78, 0x78, 0x00, frame[3])
	m.Reply = append(m.Reply, frame[4:10]...)
	m.Reply = append(m.Reply, '\r', '\n')
	return nil
}

// ack sets the standard acknowledgement, `78 78 05 type serial CRC 0D 0A`
// (the 79 79 form when ext).
func (f *gtFrame) ack(ext bool) {
	f.m.Reply = gtReply(f.m.Reply[:0], ext, f.typ, f.serial, nil)
}

// gtReply appends a frame of type typ with content and serial to dst.
func gtReply(dst []byte, ext bool, typ byte, serial uint16, content []byte) []byte {
	n := 5 + len(content)
	start := len(dst)
	if ext {
		dst = append(dst, 0x79, 0x79, byte(n>>8), byte(n))
	} else {
		dst = append(dst, 0x78, 0x78, byte(n))
	}
	dst = append(dst, typ)
	dst = append(dst, content...)
	dst = append(dst, byte(serial>>8), byte(serial))
	crc := devproto.CRC16X25(dst[start+2:])
	return append(dst, byte(crc>>8), byte(crc), '\r', '\n')
}

func (f *gtFrame) decode() error {
	m, r, typ, v := f.m, &f.r, f.typ, f.variant
	m.Kind = devproto.KindOther
	switch {
	case typ == gtLogin:
		return f.login()

	case typ == gtHeartbeat:
		m.Kind = devproto.KindHeartbeat
		f.ack(false)

	case typ == gtAddressRequest:
		const text = "NA&&NA&&0##"
		var content [1 + 4 + len(text)]byte
		content[0] = byte(len(text))
		copy(content[5:], text)
		m.Reply = gtReply(m.Reply[:0], true, gtAddressResponse, 0, content[:])

	case typ == gtTimeRequest:
		now := f.s.Now.UTC()
		content := [6]byte{byte(now.Year() - 2000), byte(now.Month()), byte(now.Day()),
			byte(now.Hour()), byte(now.Minute()), byte(now.Second())}
		m.Reply = gtReply(m.Reply[:0], false, gtTimeRequest, 0, content[:])

	case typ == gtX1GPS && v != gtSL4X:
		return f.position(f.x1GPS, false)

	case typ == gtX1PhotoInfo:
		// A photo's announcement: photos are not fetched.

	case typ == gtWifi && v != gtRFID, typ == gtWifi2:
		// The 79 79 form of a Wi-Fi report (the 78 78 one is decoded by
		// its structure): no position, answered with its time.
		if r.Left() >= 6 {
			m.Reply = append(m.Reply[:0], 0x78, 0x78, 0x00, typ)
			m.Reply = append(m.Reply, r.Buf[:6]...)
			m.Reply = append(m.Reply, '\r', '\n')
		}

	case typ == gtWifi4:
		// Wi-Fi access points only: no position, no answer.

	case typ == gtInfo && !f.ext:
		// Power voltage only: no answer.

	case typ == gtLBSMultiple3 && v == gtSR411Mini:
		return f.position(f.sr411, true)

	case typ == gtLBSMultiple1, typ == gtLBSMultiple2, typ == gtLBSMultiple3, typ == gtLBSExtend,
		typ == gtLBSWifi, typ == gtLBS2, typ == gtX1GPS, typ == gtWifi3 && v != gtLW4G,
		typ == gtWifi5 && !f.ext, typ == gtWifiAlarm:
		// Cells and access points, no position.
		f.ack(false)

	case typ == gtString:
		f.stringAnswer()
		f.ack(false)

	case typ == gtBluetoothClock, typ == gtBMS:
		f.ack(false)

	case typ == gtStatus && r.Left() == 16:
		m.Kind = devproto.KindHeartbeat
		f.ack(false)

	case typ == gtIButton:
		return f.position(f.iButton, true)

	case typ == gtStatus2 && v == gtTRX16I:
		return f.position(f.trx16i, true)

	case gtSupported(typ, v) && !(f.ext && (typ == gtGPSLBSStatus4 || typ == gtStatus2)):
		switch {
		case typ == gtLBSStatus && v == gtSpace10X:
			// Several cells, which Traccar neither decodes nor answers.
		case !gtHasGPS(typ, v):
			if typ == gtStatus {
				m.Kind = devproto.KindHeartbeat
			}
			f.ack(false)
		default:
			return f.position(f.standardOrPrefixed, true)
		}

	case typ == gtAlarm:
		if f.r.Left() > 7 {
			return f.position(f.alarm, true)
		}
		f.ack(false)

	case typ == gtStringInfo:
		return f.stringInfo()

	case typ == gtInfo, typ == gtStatus2, typ == gtOBD, typ == gtSerial:
		// Information, photo data, OBD values, a serial device's data:
		// no position, and Traccar does not answer them.

	case typ == gtGPSLBSStatus4 || typ == gtWifi5:
		return f.position(f.az735, false)

	case typ == gtGPSModular:
		return f.position(f.modular, true)

	case typ == gtMultimedia:
		f.ack(true)

	case typ == gtPeripheral || typ == gtDeviceStatus:
		f.ack(false)

	case typ == gtGPSLBS8:
		return f.position(f.gpsLBS8, false)

	default:
		// A type not decoded: acknowledged unless it answers a command.
		if !f.ext && typ != gtCommand0 && typ != gtCommand1 && typ != gtCommand2 {
			f.ack(false)
		}
	}
	return nil
}

// login decodes the login: the IMEI (8 BCD bytes, the first digit
// dropped), the device type, and on some devices the time zone, which
// applies to the times that follow on the connection.
func (f *gtFrame) login() error {
	r, m, s := &f.r, f.m, f.s
	id := r.Take(8)
	if r.Bad {
		return devproto.ErrGarbage
	}
	r.U16() // device type (some devices leave it out)
	var digits [16]byte
	const hexDigits = "0123456789abcdef"
	for i, c := range id {
		digits[2*i], digits[2*i+1] = hexDigits[c>>4], hexDigits[c&15]
	}
	m.Kind = devproto.KindLogin
	m.Identifier = devproto.IdentifierOf(digits[1:], s.Identifier)
	s.Identifier = m.Identifier
	s.Offset, s.HasOffset = 0, false
	if ext := int(r.U16()); f.length-5 > 10 && !r.Bad {
		// The time zone: bits 4-15 hold HHMM (800: GMT+8:00), bit 3
		// west of Greenwich.
		offset := time.Duration((ext>>4)/100)*time.Hour + time.Duration((ext>>4)%100)*time.Minute
		if ext&0x08 != 0 {
			offset = -offset
		}
		s.Offset, s.HasOffset = offset, true
	}
	f.ack(false)
	return nil
}

// position decodes a frame that carries a position with body, which
// reports whether it found one (false: the frame had none). A frame too
// short for its GPS block gives nothing and is not answered (as Traccar,
// whose decoder fails on it); values after the GPS block that the frame
// does not hold are left out. ack: answered the standard way.
func (f *gtFrame) position(body func(p *devproto.Position) (bool, error), ack bool) error {
	m := f.m
	p := devproto.NextPosition(m)
	found, err := body(p)
	if err != nil {
		devproto.DropPosition(m)
		return nil
	}
	if f.r.Bad {
		// The frame ended before the values that follow its GPS block:
		// they are left out.
		p.Attrs = p.Attrs[:f.gpsAttrs]
	}
	if !found || !devproto.Finite(p.Latitude) || !devproto.Finite(p.Longitude) || !devproto.OnEarth(p.Latitude, p.Longitude) {
		devproto.DropPosition(m)
	}
	if found {
		m.Kind = devproto.KindPositions
	}
	if ack {
		f.ack(false)
	}
	return nil
}

// gps decodes the GPS block into p. hasLength: a length byte follows the
// time (0: no GPS); satellites, speed: present; longSpeed: a U16 speed;
// swapFlags: the course and status before the speed. It returns whether
// there was a GPS block, and ErrGarbage when the frame ends inside it.
func (f *gtFrame) gps(p *devproto.Position, hasLength, satellites, speed, longSpeed, swapFlags bool) (bool, error) {
	r := &f.r
	t, ok := f.localTime(r.Take(6))
	if hasLength && r.U8() == 0 {
		p.Time = t
		return false, f.garbageIf(r.Bad)
	}
	*p = devproto.Position{Time: t, Attrs: p.Attrs}
	if satellites {
		p.Satellites, p.HasSatellites = int(r.U8()&0x0F), true
	}
	lat := float64(r.U32()) / 1800000
	lon := float64(r.U32()) / 1800000
	var flags uint16
	if swapFlags {
		flags = r.U16()
	}
	if speed {
		if longSpeed {
			p.Speed = float64(r.U16())
		} else {
			p.Speed = float64(r.U8())
		}
		p.HasSpeed = true
	}
	if !swapFlags {
		flags = r.U16()
	}
	if r.Bad {
		return false, devproto.ErrGarbage
	}
	p.Heading, p.HasHeading = float64(flags&0x3FF), true
	p.Valid = flags&(1<<12) != 0 && ok // no fix at a time that cannot exist
	if flags&(1<<10) == 0 {
		lat = -lat
	}
	if flags&(1<<11) != 0 {
		lon = -lon
	}
	p.Latitude, p.Longitude = lat, lon
	if flags&(1<<14) != 0 {
		devproto.AddBool(p, devproto.AttrIgnition, flags&(1<<15) != 0)
	}
	f.gpsAttrs = len(p.Attrs)
	return true, nil
}

// gpsBlock decodes the standard GPS block (satellites, one-byte speed).
func (f *gtFrame) gpsBlock(p *devproto.Position) (bool, error) {
	return f.gps(p, false, true, true, false, false)
}

func (f *gtFrame) garbageIf(bad bool) error {
	if bad {
		return devproto.ErrGarbage
	}
	return nil
}

// localTime is the UTC time of the device's YY MM DD hh mm ss, in its time
// zone when the login gave one; ok is false, and the time zero, when the
// bytes name no time that exists (CivilTime).
func (f *gtFrame) localTime(b []byte) (t time.Time, ok bool) {
	if len(b) < 6 {
		return time.Time{}, false
	}
	t, ok = devproto.CivilTime(2000+int(b[0]), int(b[1]), int(b[2]), int(b[3]), int(b[4]), int(b[5]))
	if ok && f.s.HasOffset {
		t = t.Add(-f.s.Offset)
	}
	return t, ok
}

func gtHasGPS(typ byte, v gtVariant) bool {
	switch typ {
	case gtGPS, gtGPSLBS1, gtGPSLBS2, gtGPSLBSDriver, gtGPSLBS3, gtGPSLBS4, gtGPSLBS5, gtGPSLBS6,
		gtGPSLBSStatus1, gtGPSLBSStatus2, gtGPSLBSStatus3, gtGPSLBSStatus4, gtWifi3, gtGPSPhone,
		gtGPSLBSExtend, gtGPSLBS7, gtWifi, gtFenceMulti, gtAlarmModule:
		return true
	case gtFenceSingle:
		return v != gtSeeWorld
	}
	return false
}

func gtHasLBS(typ byte, v gtVariant) bool {
	switch typ {
	case gtLBSStatus, gtGPSLBS1, gtGPSLBS2, gtGPSLBSDriver, gtGPSLBS3, gtGPSLBS4, gtGPSLBS5, gtGPSLBS6,
		gtGPSLBSStatus1, gtGPSLBSStatus2, gtGPSLBSStatus3, gtGPSLBSStatus4, gtWifi3, gtGPSLBS7, gtWifi,
		gtFenceMulti, gtAlarmModule, gtLBSAlarm, gtLBSAddress:
		return true
	case gtFenceSingle:
		return v != gtSeeWorld
	}
	return false
}

// gtHasStatus: the types with a status block (for a device whose model
// the server does not know; Traccar adds 0x22 and 0x25 on NT models).
func gtHasStatus(typ byte, v gtVariant) bool {
	switch typ {
	case gtStatus, gtStatus2, gtLBSStatus, gtGPSLBSStatus1, gtGPSLBSStatus2, gtGPSLBSStatus3,
		gtGPSLBSStatus4, gtWifi3, gtFenceMulti, gtAlarmModule, gtLBSAlarm:
		return true
	case gtFenceSingle:
		return v == gtSeeWorld
	}
	return false
}

func gtSupported(typ byte, v gtVariant) bool {
	return gtHasGPS(typ, v) || gtHasLBS(typ, v) || gtHasStatus(typ, v)
}

// standardOrPrefixed decodes the common position types (standard), and,
// when their standard layout gives no position on Earth, the layouts that
// Traccar applies by the device's model (which the server does not know),
// recognised by their structure: the NT trackers' 0x22 and 0x25 (location
// source, IMEI and date before the GPS block, a status block of their own)
// and the QH302R's 0x12 (IMEI first).
func (f *gtFrame) standardOrPrefixed(p *devproto.Position) (bool, error) {
	start := f.r
	found, err := f.standard(p)
	if err == nil && found && !f.r.Bad && devproto.OnEarth(p.Latitude, p.Longitude) {
		return found, err
	}
	b := start.Buf[start.Off:]
	skip := 0
	switch {
	case (f.typ == gtGPSLBS2 || f.typ == gtGPSLBSDriver) && len(b) > 21 && b[0] <= 1 &&
		gtBCD(b[1:9]) && gtValidDate(b[9:15]) && gtValidDate(b[15:21]):
		f.nt, skip = true, 15
	case f.typ == gtGPSLBS1 && len(b) > 14 && gtBCD(b[:8]) && gtValidDate(b[8:14]):
		skip = 8
	default:
		return found, err
	}
	f.r = start
	f.r.Skip(skip)
	p.Attrs, f.gpsAttrs = p.Attrs[:0], 0
	return f.standard(p)
}

// gtBCD reports whether b is packed decimal digits.
func gtBCD(b []byte) bool {
	for _, c := range b {
		if c>>4 > 9 || c&15 > 9 {
			return false
		}
	}
	return true
}

// gtValidDate reports whether b is a plausible YY MM DD hh mm ss.
func gtValidDate(b []byte) bool {
	return b[1] >= 1 && b[1] <= 12 && b[2] >= 1 && b[2] <= 31 && b[3] < 24 && b[4] < 60 && b[5] < 60
}

// standard decodes the common position types: GPS, cell, status, and the
// values some types or variants add after them.
func (f *gtFrame) standard(p *devproto.Position) (bool, error) {
	r, typ, v := &f.r, f.typ, f.variant
	if ok, err := f.gpsBlock(p); !ok {
		return false, err
	}
	nt := f.nt && (typ == gtGPSLBS2 || typ == gtGPSLBSDriver)
	hasStatus := gtHasStatus(typ, v) || nt
	if gtHasLBS(typ, v) && r.Left() > 0 {
		hasLength := hasStatus && typ != gtLBSStatus && typ != gtLBSAlarm &&
			typ != gtAlarmModule && (typ != gtGPSLBSStatus1 || v != gtVXT01) && typ != gtWifi3
		f.lbs(hasLength)
	}
	if hasStatus {
		if typ == gtWifi3 {
			r.U8() // network indicator
		}
		f.status(p)
		if typ == gtWifi3 || nt {
			devproto.AddNum(p, devproto.AttrPowerV, float64(r.U16())/100)
		}
		battery := r.U8()
		switch {
		case nt:
			devproto.AddNum(p, devproto.AttrBatteryV, float64(battery)/10)
		case battery <= 6: // a level of 0 to 6
			devproto.AddNum(p, devproto.AttrBatteryLevel, float64(int(battery)*100/6))
		case battery <= 100:
			devproto.AddNum(p, devproto.AttrBatteryLevel, float64(battery))
		}
		devproto.AddNum(p, devproto.AttrRSSI, float64(r.U8()))
		extension := int(r.U8())
		if (typ == gtGPSLBSStatus3 || typ == gtFenceMulti || typ == gtAlarmModule) && r.Left() > 0 {
			extension += int(r.Buf[r.Off]>>4) << 8
		}
		if v != gtVXT01 {
			if a := gtAlarmName(extension, v); a != "" {
				devproto.AddAlarm(p, a)
			}
			// The alarm byte itself, verbatim: the raw value of the
			// codes whose meaning depends on the model (Traccar sets it
			// for the TRX16i only, Gt06ProtocolDecoder.java:990-994).
			if extension != 0 || v == gtTRX16I {
				devproto.ReplaceAttr(p, devproto.Attribute{Key: devproto.AttrEvent, Kind: devproto.AttrString, Str: devproto.CodeString(extension)})
			}
		}
	}
	if typ == gtWifi3 || typ == gtGPSLBSStatus3 || typ == gtFenceMulti || typ == gtAlarmModule || nt {
		r.U8() // language
	}
	if typ == gtGPSLBSStatus1 && v == gtTRX16I {
		r.U8() // language
		f.rfid(p, r.Take(8))
	}
	if typ == gtAlarmModule {
		f.modules(p)
	}
	if typ == gtWifi3 {
		devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/1000)
		devproto.AddNum(p, devproto.AttrEngineHours, float64(r.U32())/3600) // seconds
		r.Skip(8)                                                           // terminal id
		devproto.AddNum(p, "input", float64(r.U16()))
	}
	if typ == gtGPSLBS1 {
		f.gpsLBS1(p)
	}
	if typ == gtGPSLBS2 && v == gtSeeWorld {
		devproto.ReplaceAttr(p, gtBool(devproto.AttrIgnition, r.U8() > 0))
		r.Skip(2) // reporting mode, supplementary transmission
		devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/1000)
		r.U32() // travel time
		t := r.U16()
		temp := float64(t&0x7FFF) / 100
		if t&0x8000 != 0 {
			temp = -temp
		}
		devproto.AddNum(p, devproto.AttrTempC[0], temp)
		devproto.AddNum(p, "humidity", float64(r.U16())/100)
	}
	if typ == gtGPSLBSStatus4 && v == gtSL4X {
		f.altitude(p)
	}
	if (typ == gtGPSLBS2 || typ == gtGPSLBS3 || typ == gtGPSLBS4 || typ == gtGPSLBS5) && r.Left() >= 3 && !nt {
		devproto.ReplaceAttr(p, gtBool(devproto.AttrIgnition, r.U8() > 0))
		devproto.ReplaceAttr(p, devproto.Attribute{Key: devproto.AttrEvent, Kind: devproto.AttrString, Str: devproto.CodeString(int(r.U8()))}) // the reason of the report
		devproto.AddBool(p, "archive", r.U8() > 0)
		if v == gtSL4X {
			if r.Left() > 2 {
				devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/1000)
			}
			f.altitude(p)
		}
	}
	if typ == gtGPSLBS3 {
		module := r.U16()
		sub := r.Take(int(r.U8()))
		s := devproto.BinReader{Buf: sub}
		switch module {
		case 0x0027:
			devproto.AddNum(p, devproto.AttrPowerV, float64(s.U16())/100)
		case 0x002E:
			devproto.AddNum(p, devproto.AttrOdometerKm, float64(s.U32())/1000)
		case 0x003B:
			devproto.AddNum(p, devproto.AttrAccuracyM, float64(s.U16())/100)
		}
	}
	if typ == gtWifi { // GPS_LBS_RFID
		f.driver(p, r.Take(8))
		r.U8() // validity
	}
	if nt {
		devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U24())/1000)
		devproto.AddNum(p, devproto.AttrEngineHours, float64(r.U24())/60) // minutes
		if typ == gtGPSLBSDriver {
			if n := int(r.U8()); n > 0 {
				r.U8() // type of the driver's identifier
				f.driver(p, r.Take(n-1))
			}
		}
	}
	if n := r.Left(); n == 3 || n == 7 {
		devproto.ReplaceAttr(p, gtBool(devproto.AttrIgnition, r.U8() > 0))
		r.U8() // upload mode
		if r.U8() > 0 {
			devproto.AddBool(p, "archive", true)
		}
	}
	if r.Left() == 4 {
		devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/1000)
	}
	if (typ == gtGPSLBSStatus3 || typ == gtFenceMulti) && r.Left() > 0 {
		// The geofence's number. Devices that leave it out end the data
		// here (Traccar then reads the serial's first byte,
		// Gt06ProtocolDecoder.java:1157-1159): the values before it stand.
		devproto.AddNum(p, "geofence", float64(r.U8()))
	}
	return true, nil
}

// altitude reads an altitude (int16, m) if the frame holds one.
func (f *gtFrame) altitude(p *devproto.Position) {
	if alt := int16(f.r.U16()); !f.r.Bad {
		p.Altitude, p.HasAltitude = float64(alt), true
	}
}

func gtBool(key string, v bool) devproto.Attribute {
	a := devproto.Attribute{Key: key, Kind: devproto.AttrBool}
	if v {
		a.Num = 1
	}
	return a
}

// gpsLBS1 decodes what the variants of type 0x12 add after its cell.
func (f *gtFrame) gpsLBS1(p *devproto.Position) {
	r := &f.r
	switch f.variant {
	case gtGT06ECard:
		devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/1000)
		card := r.Take(int(r.U8()))
		r.U8() // alarm
		r.U8() // swiped
		if !r.Bad {
			devproto.AddStr(p, "card", strings.TrimSpace(string(card)))
		}
	case gtBenway:
		mask := int(r.U16())
		devproto.ReplaceAttr(p, gtBool(devproto.AttrIgnition, mask&(1<<15) != 0))
		devproto.AddBool(p, devproto.AttrDin[1], mask&(1<<14) != 0)
		if mask&(1<<12) != 0 {
			value := mask & 0x1FF
			if mask&(1<<9) != 0 {
				value = -value
			}
			devproto.AddNum(p, devproto.AttrTempC[0], float64(value))
		} else {
			// An analogue value whose unit Traccar does not say (the
			// value, or a tenth of it, by bit 13): kept as "adc1".
			value := mask & 0x3FF
			if mask&(1<<13) != 0 {
				devproto.AddNum(p, "adc1", float64(value))
			} else {
				devproto.AddNum(p, "adc1", float64(value)/10)
			}
		}
	case gtVXT01:
		f.status(p)
		devproto.AddNum(p, devproto.AttrPowerV, float64(r.U16())/100)
		devproto.AddNum(p, devproto.AttrRSSI, float64(r.U8()))
		r.U8() // alarm extension
	case gtS5:
		f.status(p)
		devproto.AddNum(p, devproto.AttrPowerV, float64(r.U16())/100)
		devproto.AddNum(p, devproto.AttrRSSI, float64(r.U8()))
		if a := gtAlarmName(int(r.U8()), f.variant); a != "" {
			devproto.AddAlarm(p, a)
		}
		devproto.AddNum(p, "oil", float64(r.U16()))
		temp := int(r.U8())
		if temp&0x80 != 0 {
			temp = -(temp & 0x7F)
		}
		devproto.AddNum(p, devproto.AttrTempC[0], float64(temp))
		devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/100) // tens of metres
	case gtWeTrust:
		devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/1000)
		card := r.Take(int(r.U8()))
		if !r.Bad {
			devproto.AddStr(p, "card", string(card))
		}
		if r.U8() > 0 {
			devproto.AddAlarm(p, devproto.AlarmGeneral)
		}
		devproto.AddNum(p, "card_status", float64(r.U8()))
		devproto.AddNum(p, "driving_time", float64(r.U16()))
	}
}

// lbs skips the cell block (Fleet keeps no cells), with its length byte
// when hasLength. It reports whether there was one.
func (f *gtFrame) lbs(hasLength bool) bool {
	r, typ, v := &f.r, f.typ, f.variant
	length := 0
	if hasLength {
		length = int(r.U8())
		if length == 0 {
			zeroed := true
			for i := r.Off + 9; i < r.Off+45 && i < len(r.Buf); i++ {
				if r.Buf[i] != 0 {
					zeroed = false
					break
				}
			}
			if zeroed {
				r.Skip(min(r.Left(), 45))
			}
			return false
		}
	}
	cellType := 0
	if typ == gtGPSLBS8 || typ == gtAlarmModule {
		cellType = int(r.U8())
	}
	mcc := r.U16()
	if mcc&0x8000 != 0 || typ == gtGPSLBS6 || v == gtSL4X {
		r.U16() // mobile network code
	} else {
		r.U8()
	}
	long := cellType >= 3 || typ == gtLBSAlarm || typ == gtGPSLBS7 || typ == gtWifi3
	if long {
		r.U32() // location area code
	} else {
		r.U16()
	}
	switch {
	case long || v == gtSL4X:
		r.U64() // cell id
	case typ == gtGPSLBS6 || typ == gtIButton || typ == gtGPSLBSDriver || v == gtSeeWorld ||
		v == gtTRX16I && typ == gtStatus2:
		r.U32()
	default:
		r.U24()
	}
	if cellType >= 3 {
		r.U16() // signal strength
	} else if typ == gtGPSLBS8 || typ == gtAlarmModule {
		r.U8()
	}
	if length > 9 {
		r.Skip(length - 9)
	}
	return true
}

// status decodes the terminal information byte.
func (f *gtFrame) status(p *devproto.Position) {
	status := f.r.U8()
	devproto.AddNum(p, "status", float64(status))
	devproto.ReplaceAttr(p, gtBool(devproto.AttrIgnition, status&(1<<1) != 0))
	devproto.AddBool(p, devproto.AttrCharging, status&(1<<2) != 0)
	devproto.AddBool(p, "blocked", status&(1<<7) != 0)
	var alarm string
	switch (status >> 3) & 7 {
	case 1:
		alarm = devproto.AlarmVibration
	case 2:
		alarm = devproto.AlarmPowerCut
	case 3:
		alarm = devproto.AlarmLowBattery
	case 4:
		alarm = devproto.AlarmSOS
	case 7:
		// Traccar's "removing", which has no common name, but on the
		// VXT01 (told by the frame's length, not by a setting).
		if f.variant == gtVXT01 {
			alarm = devproto.AlarmOverspeed
		}
		// 6 is Traccar's "geofence" (no common name: the bits stay in
		// "status").
	}
	if alarm != "" {
		devproto.AddAlarm(p, alarm)
	}
}

// gtAlarmName is the common alarm word of a status block's alarm byte,
// or "" (Gt06ProtocolDecoder.java:449-481 at 9e5c458ad0bf). Codes whose
// meaning Traccar takes from the device's model, which a server is told
// by a setting rather than by the frame (0x09: tow on VL models, else
// vibration; 0x18, 0x19, 0x28, 0x29, 0x30), and those with no common word
// (power off, removing, geofence, lock, unlock, fuel leak, idle) give no
// alarm: the byte itself stays in "event", verbatim. The TRX16i is told
// by the frame's length, so its 0x0E is low_power.
func gtAlarmName(value int, v gtVariant) string {
	switch value {
	case 0x01:
		return devproto.AlarmSOS
	case 0x02:
		return devproto.AlarmPowerCut
	case 0x03:
		return devproto.AlarmVibration
	case 0x04:
		return devproto.AlarmGeofenceEnter
	case 0x05:
		return devproto.AlarmGeofenceExit
	case 0x06:
		return devproto.AlarmOverspeed
	case 0x0E:
		if v == gtTRX16I {
			return devproto.AlarmLowPower
		}
		return devproto.AlarmLowBattery
	case 0x0F:
		return devproto.AlarmLowBattery
	case 0x0C, 0x13, 0x25, 0x32:
		return devproto.AlarmTampering
	case 0x14:
		return devproto.AlarmDoor
	case 0x1A, 0x27, 0xF1:
		return devproto.AlarmHardBraking
	case 0x1B, 0x2A, 0x2B, 0x2E:
		return devproto.AlarmHardCornering
	case 0x23:
		return devproto.AlarmFallDown
	case 0x26, 0xF0:
		return devproto.AlarmHardAcceleration
	case 0x2C, 0xF2:
		return devproto.AlarmAccident
	case 0x5B, 0x5C:
		return devproto.AlarmTemperature
	case 0x0107, 0x010B:
		return devproto.AlarmJamming
	}
	return ""
}

// modules decodes the modules of an alarm-module frame: type (2 bytes),
// length, value.
func (f *gtFrame) modules(p *devproto.Position) {
	r := &f.r
	for r.Left() > 0 && !r.Bad {
		module := r.U16()
		value := devproto.BinReader{Buf: r.Take(int(r.U8()))}
		switch module {
		case 0x0018:
			devproto.AddNum(p, devproto.AttrBatteryV, float64(value.U16())/100)
		case 0x0032:
			devproto.AddNum(p, "startup_status", float64(value.U8()))
		case 0x006A:
			devproto.AddNum(p, devproto.AttrBatteryLevel, float64(value.U8()))
		}
	}
}

// rfid adds a driver's RFID tag unless it is all zeros.
func (f *gtFrame) rfid(p *devproto.Position, tag []byte) {
	for _, c := range tag {
		if c != 0 {
			f.driver(p, tag)
			return
		}
	}
}

// driver adds the driver's key of a binary tag, in upper-case
// hexadecimal (Traccar writes lower case here and upper case for
// Teltonika's: one form, so that a key reads the same whichever device
// read it).
func (f *gtFrame) driver(p *devproto.Position, tag []byte) {
	if len(tag) == 0 || 2*len(tag) > devproto.AttrMaxText {
		return
	}
	var buf [devproto.AttrMaxText]byte
	devproto.AddStr(p, devproto.AttrDriverIdentifier, f.m.Intern(devproto.AppendHexUpper(buf[:0], tag)))
}

// x1GPS decodes type 0x34 of the X1: a position with odometer, cell,
// driver, voltages and ports.
func (f *gtFrame) x1GPS(p *devproto.Position) (bool, error) {
	r := &f.r
	r.U32() // data and alarm
	if ok, err := f.gpsBlock(p); !ok {
		return false, err
	}
	r.U16() // terminal information
	devproto.AddNum(p, devproto.AttrOdometerKm, float64(r.U32())/1000)
	r.Skip(2 + 1 + 2 + 4) // cell
	if driver := r.U32(); driver > 0 {
		devproto.AddStr(p, devproto.AttrDriverIdentifier, strconv.FormatUint(uint64(driver), 10))
	}
	devproto.AddNum(p, devproto.AttrBatteryV, float64(r.U16())/100)
	devproto.AddNum(p, devproto.AttrPowerV, float64(r.U16())/100)
	ports := r.U32()
	devproto.AddNum(p, "input", float64(r.U8()))
	devproto.AddNum(p, "output", float64(r.U8()))
	for i := 1; i <= int(ports>>20&0xF) && !r.Bad; i++ {
		v := float64(r.U16()) / 100 // volts
		if i <= len(devproto.AttrAin) {
			devproto.AddNum(p, devproto.AttrAin[i-1], v)
		} else {
			devproto.AddNum(p, "adc"+strconv.Itoa(i), v)
		}
	}
	return true, nil
}

// sr411 decodes type 0x24 of the SR411 mini: position, cell, ignition
// and voltages.
func (f *gtFrame) sr411(p *devproto.Position) (bool, error) {
	r := &f.r
	if ok, err := f.gpsBlock(p); !ok {
		return false, err
	}
	f.lbs(false)
	devproto.ReplaceAttr(p, gtBool(devproto.AttrIgnition, r.U8() > 0))
	devproto.AddNum(p, devproto.AttrPowerV, float64(r.U16())/100)
	devproto.AddNum(p, devproto.AttrBatteryV, float64(r.U16())/100)
	return true, nil
}

// iButton decodes type 0x61: IMEI, position, cell and the driver's key.
func (f *gtFrame) iButton(p *devproto.Position) (bool, error) {
	r := &f.r
	r.Skip(8) // IMEI
	if ok, err := f.gpsBlock(p); !ok {
		return false, err
	}
	f.lbs(false)
	id := uint64(r.U32())<<16 | uint64(r.U16())
	devproto.AddStr(p, devproto.AttrDriverIdentifier, strconv.FormatUint(id, 10))
	return true, nil
}

// trx16i decodes type 0x36 of the TRX16i: position, cell, ignition,
// odometer, voltages, engine hours and the driver's tag.
func (f *gtFrame) trx16i(p *devproto.Position) (bool, error) {
	r := &f.r
	if ok, err := f.gpsBlock(p); !ok {
		return false, err
	}
	f.lbs(false)
	devproto.ReplaceAttr(p, gtBool(devproto.AttrIgnition, r.U8() > 0))
	devproto.AddNum(p, "upload_mode", float64(r.U8()))
	devproto.AddBool(p, "archive", r.U8() > 0)
	// An odometer whose unit Traccar leaves unconfirmed
	// (Gt06ProtocolDecoder.java:886): kept as "odometer", as read.
	devproto.AddNum(p, "odometer", float64(r.U32()))
	devproto.AddNum(p, devproto.AttrPowerV, float64(r.U16())/100)
	devproto.AddNum(p, devproto.AttrBatteryV, float64(r.U8())/10)
	devproto.AddNum(p, devproto.AttrEngineHours, float64(r.U24())/60) // minutes
	f.rfid(p, r.Take(8))
	return true, nil
}

// alarm decodes an alarm with a position (type 0x95 longer than a date
// and an event).
func (f *gtFrame) alarm(p *devproto.Position) (bool, error) {
	r := &f.r
	jc400 := f.variant == gtJC400
	if jc400 {
		r.Skip(3) // marker, version
	}
	if ok, err := f.gps(p, false, jc400, jc400, jc400, jc400); !ok {
		return false, err
	}
	if jc400 {
		devproto.AddNum(p, devproto.AttrPowerV, float64(r.U16())/10)
	}
	event := r.U8()
	devproto.AddStr(p, devproto.AttrEvent, devproto.CodeString(int(event)))
	devproto.AddNum(p, "event_data", float64(r.U16()))
	var alarm string
	switch event {
	case 0x01:
		alarm = devproto.AlarmSOS
	case 0x0E:
		alarm = devproto.AlarmLowPower
	case 0x76:
		alarm = devproto.AlarmTemperature
	case 0x80:
		alarm = devproto.AlarmVibration
	case 0x87:
		alarm = devproto.AlarmOverspeed
	case 0x88:
		alarm = devproto.AlarmPowerCut
	case 0x90:
		alarm = devproto.AlarmHardAcceleration
	case 0x91:
		alarm = devproto.AlarmHardBraking
	case 0x92:
		alarm = devproto.AlarmHardCornering
	case 0x93:
		alarm = devproto.AlarmAccident
	}
	if alarm != "" && !r.Bad {
		devproto.AddAlarm(p, alarm)
	}
	if n := r.Left(); n > 0 {
		devproto.AddStr(p, "event_files", string(r.Take(n)))
	}
	return true, nil
}

// az735 decodes the 79 79 frames 0x32 and 0x33 (AZ735): a GPS block with
// a length (0: none), a cell, a status; answered in the 79 79 form.
func (f *gtFrame) az735(p *devproto.Position) (bool, error) {
	r := &f.r
	found, err := f.gps(p, true, true, true, false, false)
	if err != nil {
		return false, err
	}
	if f.lbs(true) {
		devproto.AddNum(p, devproto.AttrRSSI, float64(r.U8()))
	}
	r.Skip(int(r.U8())) // more cells
	r.Skip(int(r.U8())) // access points
	status := r.U8()
	devproto.AddNum(p, "status", float64(status))
	if f.typ == gtWifi5 {
		switch status {
		case 0xA0:
			devproto.AddBool(p, "armed", true)
		case 0xA1:
			devproto.AddBool(p, "armed", false)
		case 0xA2, 0xA3:
			devproto.AddAlarm(p, devproto.AlarmLowBattery)
		case 0xA4:
			devproto.AddAlarm(p, devproto.AlarmGeneral)
		case 0xA5:
			devproto.AddAlarm(p, devproto.AlarmDoor)
		}
	}
	f.ack(true)
	return found, nil
}

// modular decodes type 0x70: modules of type (2 bytes), length (2) and
// value, the position among them (module 0x33).
func (f *gtFrame) modular(p *devproto.Position) (bool, error) {
	r := &f.r
	found := false
	for r.Left() > 0 {
		module := r.U16()
		b := r.Take(int(r.U16()))
		if r.Bad {
			break
		}
		value := devproto.BinReader{Buf: b}
		switch module {
		case 0x03:
			if iccid := value.Take(10); iccid != nil {
				devproto.AddStr(p, "iccid", devproto.Hex(iccid))
			}
		case 0x09:
			p.Satellites, p.HasSatellites = int(value.U8()), !value.Bad
		case 0x0A:
			devproto.AddNum(p, "sat_visible", float64(value.U8()))
		case 0x18:
			devproto.AddNum(p, devproto.AttrBatteryV, float64(value.U16())/100)
		case 0x28:
			devproto.AddNum(p, devproto.AttrHDOP, float64(value.U8())/10)
		case 0x29:
			devproto.AddNum(p, "index", float64(value.U32()))
		case 0x2A:
			input := value.U8()
			devproto.AddBool(p, "door", input&0x0F > 0)
			devproto.AddBool(p, "tamper", input>>4 > 0)
		case 0x2B:
			devproto.AddNum(p, "boot_reason", float64(value.U8()))
		case 0x2E:
			o := value.Take(4)
			if o != nil {
				devproto.AddNum(p, devproto.AttrOdometerKm, float64(uint32(o[0])|uint32(o[1])<<8|uint32(o[2])<<16|uint32(o[3])<<24)/1000)
			}
		case 0x34:
			event := value.U8()
			devproto.ReplaceAttr(p, devproto.Attribute{Key: devproto.AttrEvent, Kind: devproto.AttrString, Str: devproto.CodeString(int(event))})
			if a := gtModularAlarm(event); a != "" {
				devproto.AddAlarm(p, a)
			}
		case 0x7F:
			id := value.Take(6)
			battery := value.U16()
			level := value.U8()
			temp := int16(value.U16())
			humidity := int16(value.U16())
			status := value.U8()
			if value.Bad {
				continue
			}
			devproto.AddStr(p, "tag1_id", devproto.Hex(id))
			devproto.AddNum(p, "tag1_battery", float64(battery)/1000)
			devproto.AddNum(p, "tag1_battery_level", float64(level))
			devproto.AddNum(p, "tag1_temp", float64(temp)/10)
			devproto.AddNum(p, "tag1_humidity", float64(humidity))
			devproto.AddNum(p, "tag1_status", float64(status))
		case 0x33:
			t := value.U32()
			sats := value.U8()
			alt := int16(value.U16())
			lat := float64(value.U32()) / 1800000
			lon := float64(value.U32()) / 1800000
			speed := value.U8()
			flags := value.U16()
			if value.Bad {
				continue
			}
			if flags&(1<<10) == 0 {
				lat = -lat
			}
			if flags&(1<<11) != 0 {
				lon = -lon
			}
			p.Time = time.Unix(int64(t), 0).UTC()
			p.Satellites, p.HasSatellites = int(sats), true
			p.Altitude, p.HasAltitude = float64(alt), true
			p.Latitude, p.Longitude = lat, lon
			p.Speed, p.HasSpeed = float64(speed), true
			p.Heading, p.HasHeading = float64(flags&0x3FF), true
			p.Valid = flags&(1<<12) != 0
			found = true
		}
	}
	return found, nil
}

// gtModularAlarm is the common alarm word of an event module of type
// 0x70, or "" (Gt06ProtocolDecoder.java:1461-1477: removing, power on and
// power off have no common word; the event stays in "event").
func gtModularAlarm(event byte) string {
	switch event {
	case 0x10:
		return devproto.AlarmDoor
	case 0x14:
		return devproto.AlarmGeofenceEnter
	case 0x15:
		return devproto.AlarmGeofenceExit
	case 0x16:
		return devproto.AlarmTemperature
	case 0x1A:
		return devproto.AlarmLowBattery
	case 0x1B:
		return devproto.AlarmOverspeed
	case 0x20:
		return devproto.AlarmVibration
	case 0x21:
		return devproto.AlarmPowerCut
	case 0x23:
		return devproto.AlarmTampering
	}
	return ""
}

// gpsLBS8 decodes type 0x38: position, upload mode and cell.
func (f *gtFrame) gpsLBS8(p *devproto.Position) (bool, error) {
	if ok, err := f.gpsBlock(p); !ok {
		return false, err
	}
	f.r.Skip(2) // upload mode, re-upload
	f.lbs(false)
	return true, nil
}

// stringInfo decodes type 0x21, a text answer: when it is "Current
// position!Lat:N..,Lon:E..,Course:..,Speed:..,DateTime:yyyy-MM-dd
// HH:mm:ss", a position (the speed in knots, as Traccar reads it).
func (f *gtFrame) stringInfo() error {
	r, m := &f.r, f.m
	flag := r.U32() // the server flag of the command it answers
	encoding := r.U8()
	if r.Bad {
		return devproto.ErrGarbage
	}
	data := r.Buf[r.Off:]
	var text string
	if encoding == 1 {
		text = string(data)
	} else {
		u := make([]uint16, len(data)/2)
		for i := range u {
			u[i] = devproto.BE16(data[2*i:])
		}
		text = string(utf16.Decode(u))
	}
	m.CommandResult = strings.TrimSpace(strings.TrimRight(text, "\x00"))
	m.HasResult, m.ResultSeq = true, flag
	p := devproto.NextPosition(m)
	if !gtCurrentPosition(text, f, p) {
		devproto.DropPosition(m)
	} else {
		m.Kind = devproto.KindPositions
	}
	return nil
}

// gtCurrentPosition parses a "Current position!" text into p.
func gtCurrentPosition(text string, f *gtFrame, p *devproto.Position) bool {
	rest, ok := strings.CutPrefix(text, "Current position!")
	if !ok {
		return false
	}
	field := func(name string) string {
		// The last field has no comma after it: Cut returns it whole.
		v, after, _ := strings.Cut(rest, ",")
		rest = after
		v, found := strings.CutPrefix(v, name)
		if !found {
			return ""
		}
		return v
	}
	coordinate := func(name string, neg byte) (float64, bool) {
		v := field(name)
		if len(v) < 2 {
			return 0, false
		}
		x, err := strconv.ParseFloat(v[1:], 64)
		if err != nil {
			return 0, false
		}
		if v[0] == neg {
			x = -x
		}
		return x, true
	}
	lat, ok1 := coordinate("Lat:", 'S')
	lon, ok2 := coordinate("Lon:", 'W')
	course, err1 := strconv.ParseFloat(field("Course:"), 64)
	speed, err2 := strconv.ParseFloat(field("Speed:"), 64)
	when := strings.Join(strings.Fields(strings.TrimRight(field("DateTime:"), "\x00")), " ")
	t, err3 := time.Parse("2006-01-02 15:04:05", when)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil ||
		!devproto.Finite(course) || !devproto.Finite(speed) {
		return false
	}
	if f.s.HasOffset {
		t = t.Add(-f.s.Offset)
	}
	*p = devproto.Position{
		Time: t, Latitude: lat, Longitude: lon, Valid: true,
		Heading: course, HasHeading: true,
		Speed: speed * 1.852, HasSpeed: true,
		Attrs: p.Attrs,
	}
	return devproto.OnEarth(lat, lon)
}
