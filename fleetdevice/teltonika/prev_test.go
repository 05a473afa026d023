package teltonika

import (
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// The record decoding of Teltonika's frames as it was before the
// attributes were named in the common vocabulary (Traccar's names and
// units, "power" in volts, "odometer" in metres...), kept for
// BenchmarkTeltonikaVocabulary to measure the decoder against in the
// same run. Not used by the decoder.

// prevTkDecode decodes a TCP data frame as Decode did.
func prevTkDecode(frame []byte, m *devproto.Message) bool {
	l := uint64(devproto.BE32(frame[4:]))
	if l+12 != uint64(len(frame)) {
		return false
	}
	body := frame[8 : 8+l]
	if uint32(devproto.CRC16ARC(body)) != devproto.BE32(frame[8+l:]) {
		return false
	}
	codec, n := body[0], body[1]
	m.Kind = devproto.KindPositions
	if !prevTkRecords(body[2:len(body)-1], codec, int(n), false, m) {
		return false
	}
	m.Reply = append(m.Reply[:0], 0, 0, 0, n)
	return true
}

// tkRecords decodes n records that make up the whole of b, or reports
// false (and leaves no position) when they do not.
func prevTkRecords(b []byte, codec byte, n int, extended bool, m *devproto.Message) bool {
	m.Positions = m.Positions[:0]
	r := devproto.BinReader{Buf: b}
	for i := 0; i < n; i++ {
		var ok bool
		if codec == tkCodecGH3000 {
			ok = tkRecordGH3000(&r, m)
		} else {
			ok = prevTkRecord(&r, codec, extended, m)
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
func prevTkRecord(r *devproto.BinReader, codec byte, extended bool, m *devproto.Message) bool {
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
	devproto.AddNum(p, "event", float64(event))
	alarm := -1 // the index of the alarm attribute, once there is one

	for _, size := range [4]int{1, 2, 4, 8} {
		count := r.U8or16(wide)
		for j := 0; j < count; j++ {
			id := r.U8or16(wideID)
			v := r.UN(size)
			if r.Bad {
				return false
			}
			prevTkElement(p, &alarm, id, size, v)
		}
	}
	if extended {
		count := r.U8or16(wide)
		for j := 0; j < count; j++ {
			id := r.U8or16(wideID)
			v := r.Take(16)
			if r.Bad {
				return false
			}
			p.Attrs = append(p.Attrs, devproto.Attribute{IO: id, Kind: devproto.AttrString, Str: devproto.Hex(v)})
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

// tkElement adds the I/O element id of size bytes and value v: by the name
// Traccar gives it, else numbered.
func prevTkElement(p *devproto.Position, alarm *int, id, size int, v uint64) {
	u8 := func() uint64 { return tkField(v, size, 1) }
	u16 := func() uint64 { return tkField(v, size, 2) }
	u32 := func() uint64 { return tkField(v, size, 4) }
	switch id {
	case 1:
		devproto.AddBool(p, "in1", u8() > 0)
	case 2:
		devproto.AddBool(p, "in2", u8() > 0)
	case 3:
		devproto.AddBool(p, "in3", u8() > 0)
	case 4:
		devproto.AddBool(p, "in4", u8() > 0)
	case 16:
		devproto.AddNum(p, "odometer", float64(u32()))
	case 17:
		devproto.AddNum(p, "axisX", float64(int16(u16())))
	case 18:
		devproto.AddNum(p, "axisY", float64(int16(u16())))
	case 19:
		devproto.AddNum(p, "axisZ", float64(int16(u16())))
	case 21:
		devproto.AddNum(p, "rssi", float64(u8()))
	case 25:
		devproto.AddNum(p, "bleTemp1", float64(int16(u16()))/100)
	case 26:
		devproto.AddNum(p, "bleTemp2", float64(int16(u16()))/100)
	case 27:
		devproto.AddNum(p, "bleTemp3", float64(int16(u16()))/100)
	case 28:
		devproto.AddNum(p, "bleTemp4", float64(int16(u16()))/100)
	case 66:
		devproto.AddNum(p, "power", float64(u16())/1000)
	case 67:
		devproto.AddNum(p, "battery", float64(u16())/1000)
	case 78:
		if size == 8 && v != 0 {
			devproto.AddStr(p, "driverUniqueId", prevTkHexUpper(bits.ReverseBytes64(v)))
		}
	case 179:
		devproto.AddBool(p, "out1", u8() > 0)
	case 180:
		devproto.AddBool(p, "out2", u8() > 0)
	case 181:
		devproto.AddNum(p, "pdop", float64(u16())/10)
	case 182:
		devproto.AddNum(p, "hdop", float64(u16())/10)
	case 199:
		devproto.AddNum(p, "tripOdometer", float64(u32()))
	case 236:
		if u8() > 0 {
			devproto.AddAlarmAt(p, alarm, "general")
		}
	case 239:
		devproto.AddBool(p, "ignition", u8() > 0)
	case 240:
		devproto.AddBool(p, "motion", u8() > 0)
	case 241:
		devproto.AddNum(p, "operator", float64(u32()))
	case 253:
		switch u8() {
		case 1:
			devproto.AddAlarmAt(p, alarm, "hardAcceleration")
		case 2:
			devproto.AddAlarmAt(p, alarm, "hardBraking")
		case 3:
			devproto.AddAlarmAt(p, alarm, "hardCornering")
		}
	default:
		// Unsigned as Traccar reads it, an 8-byte value signed.
		devproto.AddIO(p, id, int64(v))
	}
}

// tkHexUpper is v as 16 upper-case hexadecimal digits.
func prevTkHexUpper(v uint64) string {
	s := strconv.FormatUint(v, 16)
	return strings.ToUpper(strings.Repeat("0", 16-len(s)) + s)
}
