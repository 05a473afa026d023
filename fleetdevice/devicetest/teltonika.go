package devicetest

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Teltonika is a Teltonika tracker (FMB920 and the like) speaking Codec 8,
// over TCP (Device) or UDP (Datagram).
type Teltonika struct {
	IMEI string // 15 digits
}

// TeltonikaRecord is one AVL record of Codec 8: a position, its priority
// and I/O elements.
type TeltonikaRecord struct {
	Point
	Priority byte
	EventIO  byte
	IO       []TeltonikaIO
}

// TeltonikaIO is one I/O element: its id, and its value in Size bytes
// (1, 2, 4 or 8).
type TeltonikaIO struct {
	ID    byte
	Size  int
	Value uint64
}

func (*Teltonika) Protocol() string { return "teltonika" }

// Hello is the IMEI handshake: its length in 2 bytes and the IMEI in
// ASCII; the server answers 01 (00 refuses it).
func (d *Teltonika) Hello() ([]byte, Expect) {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(d.IMEI)))
	return append(b, d.IMEI...), Bytes([]byte{0x01})
}

// Refused is the answer to the handshake of an unknown IMEI.
func (*Teltonika) Refused() Expect { return Bytes([]byte{0x00}) }

// Report is one Codec 8 frame of pts (without I/O elements), acknowledged
// with the record count in 4 bytes.
func (d *Teltonika) Report(pts []Point) ([]byte, Expect) {
	return d.Codec8(records(pts)), d.Ack(len(pts))
}

// Heartbeat is the lone FF byte, which gets no answer.
func (*Teltonika) Heartbeat() ([]byte, Expect) { return []byte{0xFF}, nil }

// Ack is the acknowledgement of a frame of n records.
func (*Teltonika) Ack(n int) Expect {
	return Bytes(binary.BigEndian.AppendUint32(nil, uint32(n)))
}

// Codec8 is the TCP frame of recs: a zero preamble, the data length, the
// data (codec 08, the count, the records, the count again) and its
// CRC-16/IBM in 4 bytes.
func (*Teltonika) Codec8(recs []TeltonikaRecord) []byte {
	data := avlData(recs)
	b := make([]byte, 4, 12+len(data))
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, uint32(CRC16IBM(data)))
}

// Datagram is the UDP form of recs: length, packet id, 01, the AVL packet
// id, the IMEI and the AVL data, without a CRC.
func (d *Teltonika) Datagram(packetID uint16, avlID byte, recs []TeltonikaRecord) []byte {
	data := avlData(recs)
	body := binary.BigEndian.AppendUint16(nil, packetID)
	body = append(body, 0x01, avlID)
	body = binary.BigEndian.AppendUint16(body, uint16(len(d.IMEI)))
	body = append(body, d.IMEI...)
	body = append(body, data...)
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(body))), body...)
}

// DatagramAck is the acknowledgement of a datagram of n records: 00 05,
// the packet id, 01, the AVL packet id and n.
func (*Teltonika) DatagramAck(packetID uint16, avlID byte, n int) Expect {
	b := []byte{0x00, 0x05}
	b = binary.BigEndian.AppendUint16(b, packetID)
	return Bytes(append(b, 0x01, avlID, byte(n)))
}

func records(pts []Point) []TeltonikaRecord {
	recs := make([]TeltonikaRecord, len(pts))
	for i, p := range pts {
		recs[i].Point = p
	}
	return recs
}

// avlData is codec 08, the count, the records and the count.
func avlData(recs []TeltonikaRecord) []byte {
	b := []byte{0x08, byte(len(recs))}
	for _, r := range recs {
		b = binary.BigEndian.AppendUint64(b, uint64(r.Time.UnixMilli()))
		b = append(b, r.Priority)
		b = binary.BigEndian.AppendUint32(b, uint32(int32(math.Round(r.Longitude*1e7))))
		b = binary.BigEndian.AppendUint32(b, uint32(int32(math.Round(r.Latitude*1e7))))
		b = binary.BigEndian.AppendUint16(b, uint16(int16(math.Round(r.Altitude))))
		b = binary.BigEndian.AppendUint16(b, uint16(math.Round(r.Heading)))
		sats := r.Satellites
		if !r.Valid {
			sats = 0 // a record without satellites is one without a fix
		} else if sats == 0 {
			sats = 1
		}
		b = append(b, byte(sats))
		b = binary.BigEndian.AppendUint16(b, uint16(math.Round(r.Speed)))
		b = append(b, r.EventIO, byte(len(r.IO)))
		for _, size := range []int{1, 2, 4, 8} {
			n := 0
			for _, io := range r.IO {
				if io.Size == size {
					n++
				}
			}
			b = append(b, byte(n))
			for _, io := range r.IO {
				if io.Size != size {
					continue
				}
				b = append(b, io.ID)
				for i := size - 1; i >= 0; i-- {
					b = append(b, byte(io.Value>>(8*i)))
				}
			}
		}
	}
	return append(b, byte(len(recs)))
}

// Command recognises a codec 12 command frame (type 0x05) over TCP.
func (*Teltonika) Command(b []byte) (int, error) {
	for i := 0; i < 4 && i < len(b); i++ {
		if b[i] != 0 {
			return 0, fmt.Errorf("%w: % x is not a codec 12 frame", ErrUnexpected, b)
		}
	}
	if len(b) < 12 {
		return 0, nil
	}
	n := 12 + int(binary.BigEndian.Uint32(b[4:]))
	if b[8] != 0x0C || b[10] != 0x05 || n > 1<<16 {
		return 0, fmt.Errorf("%w: % x is not a codec 12 command", ErrUnexpected, b)
	}
	if len(b) < n {
		return 0, nil
	}
	return n, nil
}

// Answer reads a codec 12 command (its CRC checked) and answers with a
// codec 12 response (type 0x06) holding the text an FMB device answers:
// `setdigout 1?` → "DOUT1:1 DOUT2:IGNORED", `getgps` → its GPS state,
// anything else "Unknown command". A `cpureset` restarts the device,
// which answers nothing.
func (d *Teltonika) Answer(cmd []byte) ([]byte, error) {
	n, err := d.Command(cmd)
	if err != nil || n != len(cmd) || n < 17 {
		return nil, fmt.Errorf("%w: % x is not one codec 12 command", ErrUnexpected, cmd)
	}
	data := cmd[8 : n-4]
	if uint32(CRC16IBM(data)) != binary.BigEndian.Uint32(cmd[n-4:]) ||
		int(binary.BigEndian.Uint32(data[3:]))+8 != len(data) {
		return nil, fmt.Errorf("%w: % x: bad CRC or length", ErrUnexpected, cmd)
	}
	text := string(data[7 : len(data)-1])
	var answer string
	switch {
	case text == "cpureset":
		return nil, nil
	case text == "getgps":
		answer = "GPS:0 Sat:0 Lat:0.000000 Long:0.000000 Alt:0 Speed:0 Dir:0"
	case strings.HasPrefix(text, "setdigout "):
		var parts []string
		for i, c := range strings.TrimPrefix(text, "setdigout ") {
			v := string(c)
			if c == '?' {
				v = "IGNORED"
			}
			parts = append(parts, fmt.Sprintf("DOUT%d:%s", i+1, v))
		}
		answer = strings.Join(parts, " ")
	default:
		answer = "Unknown command"
	}
	return TeltonikaResponse(answer), nil
}

// TeltonikaResponse is a codec 12 response frame (type 0x06) of text.
func TeltonikaResponse(text string) []byte {
	data := []byte{0x0C, 0x01, 0x06}
	data = binary.BigEndian.AppendUint32(data, uint32(len(text)))
	data = append(append(data, text...), 0x01)
	b := binary.BigEndian.AppendUint32(make([]byte, 4), uint32(len(data)))
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, uint32(CRC16IBM(data)))
}
