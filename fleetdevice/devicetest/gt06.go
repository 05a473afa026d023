package devicetest

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
)

// GT06 is a tracker of the GT06 family (Concox, Jimi...): 78 78 frames,
// each numbered with Serial, which is incremented as frames are built.
type GT06 struct {
	IMEI   string // 15 digits
	Serial uint16 // the serial number of the next frame
	// Offset is the device clock's offset from UTC: with HasOffset, the
	// login carries it (after TypeID) and the device's times are local.
	Offset    time.Duration
	HasOffset bool
	TypeID    uint16
	// Cell is the serving cell sent with each position.
	Cell GT06Cell
	// ACC, with HasACC, is the ignition state sent with each position.
	ACC, HasACC bool
}

// GT06Cell is a serving cell: mobile country and network codes, location
// area code and cell id (24 bits).
type GT06Cell struct {
	MCC    uint16
	MNC    byte
	LAC    uint16
	CellID uint32
}

// GT06 message types.
const (
	GT06Login     = 0x01
	GT06Location  = 0x12 // GPS and cell
	GT06Heartbeat = 0x13
)

func (*GT06) Protocol() string { return "gt06" }

// Hello is the login (0x01): the IMEI in BCD after a 0 nibble, and with
// HasOffset the terminal type and the time zone. The server answers it as
// every frame, with its type and serial number.
func (d *GT06) Hello() ([]byte, Expect) {
	digits := "0" + d.IMEI
	data := make([]byte, 8)
	for i := 0; i < 16 && i < len(digits); i++ {
		data[i/2] |= (digits[i] - '0') << (4 * (1 - i%2))
	}
	if d.HasOffset {
		data = binary.BigEndian.AppendUint16(data, d.TypeID)
		mins := int(d.Offset / time.Minute)
		west := mins < 0
		if west {
			mins = -mins
		}
		tz := uint16((mins/60*100 + mins%60) << 4)
		if west {
			tz |= 0x8
		}
		data = binary.BigEndian.AppendUint16(data, tz)
	}
	return d.frame(GT06Login, data)
}

// Report is one location frame (0x12) a point, each acknowledged.
func (d *GT06) Report(pts []Point) ([]byte, Expect) {
	var b []byte
	var acks []Expect
	for _, p := range pts {
		f, ack := d.Position(p)
		b = append(b, f...)
		acks = append(acks, ack)
	}
	return b, Seq(acks...)
}

// Position is the location frame (0x12) of p and its acknowledgement.
func (d *GT06) Position(p Point) ([]byte, Expect) {
	t := p.Time.UTC()
	if d.HasOffset {
		t = t.Add(d.Offset)
	}
	data := []byte{byte(t.Year() % 100), byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()), byte(t.Second())}
	data = append(data, 0xC0|byte(min(p.Satellites, 15)))
	data = binary.BigEndian.AppendUint32(data, uint32(math.Round(math.Abs(p.Latitude)*1_800_000)))
	data = binary.BigEndian.AppendUint32(data, uint32(math.Round(math.Abs(p.Longitude)*1_800_000)))
	data = append(data, byte(min(math.Round(p.Speed), 255)))
	flags := uint16(math.Round(p.Heading)) & 0x3FF
	if p.Latitude >= 0 {
		flags |= 1 << 10
	}
	if p.Longitude < 0 {
		flags |= 1 << 11
	}
	if p.Valid {
		flags |= 1 << 12
	}
	if d.HasACC {
		flags |= 1 << 14
		if d.ACC {
			flags |= 1 << 15
		}
	}
	data = binary.BigEndian.AppendUint16(data, flags)
	data = binary.BigEndian.AppendUint16(data, d.Cell.MCC)
	data = append(data, d.Cell.MNC)
	data = binary.BigEndian.AppendUint16(data, d.Cell.LAC)
	data = append(data, byte(d.Cell.CellID>>16), byte(d.Cell.CellID>>8), byte(d.Cell.CellID))
	return d.frame(GT06Location, data)
}

// Heartbeat is a status frame (0x13): terminal information, voltage
// level, GSM signal, language.
func (d *GT06) Heartbeat() ([]byte, Expect) {
	return d.frame(GT06Heartbeat, []byte{0x46, 0x06, 0x04, 0x00, 0x02})
}

// frame builds a frame of the next serial number, and its
// acknowledgement.
func (d *GT06) frame(typ byte, data []byte) ([]byte, Expect) {
	serial := d.Serial
	d.Serial++
	b := []byte{0x78, 0x78, byte(1 + len(data) + 4), typ}
	b = append(b, data...)
	b = binary.BigEndian.AppendUint16(b, serial)
	b = binary.BigEndian.AppendUint16(b, CRCITU(b[2:]))
	return append(b, 0x0D, 0x0A), Bytes(GT06Ack(typ, serial))
}

// GT06Ack is the server's answer to a frame of type typ and serial
// number serial: 78 78 05, the type, the serial, the CRC, 0D 0A.
func GT06Ack(typ byte, serial uint16) []byte {
	b := []byte{0x78, 0x78, 0x05, typ}
	b = binary.BigEndian.AppendUint16(b, serial)
	b = binary.BigEndian.AppendUint16(b, CRCITU(b[2:]))
	return append(b, 0x0D, 0x0A)
}

// GT06Command is the type of the server's online command.
const GT06Command = 0x80

// Command recognises an online command frame (0x80) of the server.
func (*GT06) Command(b []byte) (int, error) {
	if len(b) >= 2 && (b[0] != 0x78 || b[1] != 0x78) || len(b) >= 4 && b[3] != GT06Command {
		return 0, fmt.Errorf("%w: % x is not a GT06 command", ErrUnexpected, b)
	}
	if len(b) < 3 || len(b) < 5+int(b[2]) {
		return 0, nil
	}
	return 5 + int(b[2]), nil
}

// Answer reads an online command (its CRC checked) and answers with a
// 0x15 frame that echoes its server flag, with the text a GT06N answers:
// `DYD,<password>#` → "DYD=Success!", `HFYD,<password>#` →
// "HFYD=Success!", anything else "Unknown command!".
func (d *GT06) Answer(cmd []byte) ([]byte, error) {
	n, err := d.Command(cmd)
	if err != nil || n != len(cmd) || n < 15 || int(cmd[4]) != n-11 ||
		CRCITU(cmd[2:n-4]) != binary.BigEndian.Uint16(cmd[n-4:]) || cmd[n-2] != '\r' || cmd[n-1] != '\n' {
		return nil, fmt.Errorf("%w: % x is not one GT06 command", ErrUnexpected, cmd)
	}
	flag, text := cmd[5:9], string(cmd[9:n-6])
	answer := "Unknown command!"
	switch {
	case strings.HasPrefix(text, "DYD,") || text == "DYD#":
		answer = "DYD=Success!"
	case strings.HasPrefix(text, "HFYD,") || text == "HFYD#":
		answer = "HFYD=Success!"
	}
	data := append([]byte{byte(4 + len(answer))}, flag...)
	data = append(data, answer...)
	data = append(data, 0x00, 0x02) // language: English
	frame, _ := d.frame(0x15, data)
	return frame, nil
}
