// Package devicetest simulates GPS trackers and phone apps for tests and
// load tools: for each protocol of fleetdevice it builds the frames a
// device sends (login, positions, heartbeat) and recognises the answer
// the device waits for.
//
// It is written from the protocols' descriptions (Teltonika's, the GT06
// family's, H02's, Queclink's @Track, GPS103's, OsmAnd's) and Traccar's
// decoders, not from fleetdevice's decoders, so that each checks the
// other; its tests rebuild captured frames of fleetdevice's corpus.
//
// A stream device implements Device:
//
//	d := &devicetest.Teltonika{IMEI: "356307042441013"}
//	hello, want := d.Hello()
//	conn.Write(hello)
//	devicetest.Read(rd, want) // 01: the server knows the device
//	frame, want := d.Report(points)
//	conn.Write(frame)
//	devicetest.Read(rd, want) // the record count, once they are stored
//
// Each stream device is also Commanded: it reads a command the server
// writes and answers it as the real device does (Teltonika a codec 12
// response, GT06 a 0x15 frame echoing the server flag, H02 a V4 sentence,
// GPS103 a jt or kt report, Queclink a +ACK echoing the serial number):
//
//	cmd, _ := devicetest.Read(rd, d.Command)
//	answer, _ := d.Answer(cmd)
//	conn.Write(answer)
package devicetest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"
)

// Point is one position a simulated device sends, in the API's units.
// Each protocol writes it in its own (knots, minutes of arc...), at the
// precision the protocol has.
type Point struct {
	Time       time.Time
	Latitude   float64
	Longitude  float64
	Speed      float64 // km/h
	Heading    float64 // degrees clockwise from north
	Altitude   float64 // metres
	Satellites int
	Valid      bool // the device has a fix
}

// Device is a simulated device of a stream protocol. Its frames are for
// one connection, in the order they are built (some protocols number
// them).
type Device interface {
	// Protocol is the protocol's name in fleetdevice ("teltonika").
	Protocol() string
	// Hello is what the device sends first on a connection (its login),
	// and the answer it waits for when the server knows it; nil, nil when
	// the protocol has no login.
	Hello() ([]byte, Expect)
	// Report is the frames carrying pts, and the acknowledgement the
	// device waits for once they are stored; a nil Expect when the
	// protocol acknowledges none.
	Report(pts []Point) ([]byte, Expect)
	// Heartbeat is a keep-alive frame and its answer (nil: none).
	Heartbeat() ([]byte, Expect)
}

// Expect recognises an answer of the server at the start of b: it returns
// the answer's length once b holds all of it, 0 while b holds only its
// beginning, and ErrUnexpected when b is not the answer.
type Expect func(b []byte) (int, error)

// ErrUnexpected: the server answered something else than was expected.
var ErrUnexpected = errors.New("devicetest: not the expected answer")

// Bytes expects exactly want.
func Bytes(want []byte) Expect {
	return func(b []byte) (int, error) {
		n := min(len(b), len(want))
		if !bytes.Equal(b[:n], want[:n]) {
			return 0, fmt.Errorf("%w: got % x, want % x", ErrUnexpected, b, want)
		}
		if n < len(want) {
			return 0, nil
		}
		return len(want), nil
	}
}

// Text expects exactly the text want.
func Text(want string) Expect { return Bytes([]byte(want)) }

// Seq expects each of es, one after the other.
func Seq(es ...Expect) Expect {
	return func(b []byte) (int, error) {
		off := 0
		for _, e := range es {
			n, err := e(b[off:])
			if err != nil || n == 0 {
				return 0, err
			}
			off += n
		}
		return off, nil
	}
}

// Read reads from r until e recognises an answer, and returns it. It
// reads no byte beyond the answer.
func Read(r *bufio.Reader, e Expect) ([]byte, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return b, err
		}
		b = append(b, c)
		n, err := e(b)
		if err != nil {
			return b, err
		}
		if n > 0 {
			return b, nil
		}
	}
}

// CRC16IBM is CRC-16/ARC (IBM): polynomial 0xA001 reflected, initial 0,
// what Teltonika's Codec 8 frames end with.
func CRC16IBM(b []byte) uint16 { return crc16(b, 0xA001, 0) }

// CRCITU is CRC-16/X-25 (CRC-ITU): polynomial 0x8408 reflected, initial
// and final XOR 0xFFFF, what GT06 frames end with.
func CRCITU(b []byte) uint16 { return ^crc16(b, 0x8408, 0xFFFF) }

// crc16 is a reflected CRC-16 of polynomial poly from crc.
func crc16(b []byte, poly, crc uint16) uint16 {
	for _, c := range b {
		crc ^= uint16(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// degMin splits an angle's absolute value into whole degrees and
// minutes, rounded to the given decimals of a minute (so that the
// minutes never round up to 60).
func degMin(v float64, decimals int) (int, float64) {
	scale := math.Pow10(decimals)
	total := math.Round(math.Abs(v) * 60 * scale) // in units of the last decimal
	deg := int(total / (60 * scale))
	return deg, (total - float64(deg)*60*scale) / scale
}

// knots is km/h in knots.
func knots(kmh float64) float64 { return kmh / 1.852 }

// Commanded is a simulated device that answers the commands a server
// writes to it, as the real device does.
type Commanded interface {
	// Command recognises a command frame of the server at the start of b
	// (an Expect, for Read).
	Command(b []byte) (int, error)
	// Answer is the device's answer to the command frame cmd (one that
	// Command recognised); nil when the device answers none. It returns
	// ErrUnexpected for bytes that are not a command it reads.
	Answer(cmd []byte) ([]byte, error)
}
