package fleetdevice

import (
	"math"
	"strconv"
	"strings"
)

// Helpers of the binary protocols (Teltonika, GT06): a bounds-checked
// big-endian reader, the two CRC-16s, and the reuse of a Message's
// positions.

// binReader reads big-endian values from b. A read past the end returns
// zero and sets bad, so that a decoder checks once after a group of reads
// instead of after each, and never indexes out of range.
type binReader struct {
	b   []byte
	off int
	bad bool
}

// left is the number of bytes not read yet.
func (r *binReader) left() int { return len(r.b) - r.off }

// take returns the next n bytes, or nil (and sets bad) when fewer are left.
func (r *binReader) take(n int) []byte {
	if n < 0 || n > len(r.b)-r.off {
		r.bad = true
		r.off = len(r.b)
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

func (r *binReader) skip(n int) { r.take(n) }

func (r *binReader) u8() uint8 {
	if r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *binReader) u16() uint16 {
	p := r.take(2)
	if p == nil {
		return 0
	}
	return uint16(p[0])<<8 | uint16(p[1])
}

func (r *binReader) u24() uint32 {
	p := r.take(3)
	if p == nil {
		return 0
	}
	return uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
}

func (r *binReader) u32() uint32 {
	p := r.take(4)
	if p == nil {
		return 0
	}
	return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
}

func (r *binReader) u64() uint64 {
	p := r.take(8)
	if p == nil {
		return 0
	}
	return uint64(r.beN(p))
}

// u8or16 reads a u16 when wide, else a u8.
func (r *binReader) u8or16(wide bool) int {
	if wide {
		return int(r.u16())
	}
	return int(r.u8())
}

// uN reads an unsigned value of n bytes (1 to 8).
func (r *binReader) uN(n int) uint64 {
	p := r.take(n)
	if p == nil {
		return 0
	}
	return r.beN(p)
}

func (*binReader) beN(p []byte) uint64 {
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v
}

// be16 and be32 read a big-endian value from the start of p (which holds
// enough bytes).
func be16(p []byte) uint16 { return uint16(p[0])<<8 | uint16(p[1]) }
func be32(p []byte) uint32 {
	return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
}

// crcARC is CRC-16/ARC (also called CRC-16/IBM: polynomial 0x8005
// reflected, initial value 0, no final xor), Teltonika's checksum.
func crcARC(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		i := int(byte(c)^x) * 2
		c = c>>8 ^ (uint16(crcARCTable[i])<<8 | uint16(crcARCTable[i+1]))
	}
	return c
}

// crcX25 is CRC-16/X-25 (CRC-ITU: polynomial 0x1021 reflected, initial
// value 0xFFFF, final xor 0xFFFF), GT06's checksum.
func crcX25(b []byte) uint16 {
	c := uint16(0xFFFF)
	for _, x := range b {
		i := int(byte(c)^x) * 2
		c = c>>8 ^ (uint16(crcX25Table[i])<<8 | uint16(crcX25Table[i+1]))
	}
	return ^c
}

// binNextPosition appends a zero Position to m.Positions, reusing the
// capacity of the slice and of the Attrs of the position it reuses, and
// returns it.
func binNextPosition(m *Message) *Position {
	n := len(m.Positions)
	if n < cap(m.Positions) {
		m.Positions = m.Positions[:n+1]
		p := &m.Positions[n]
		*p = Position{Attrs: p.Attrs[:0]}
		return p
	}
	m.Positions = append(m.Positions, Position{})
	return &m.Positions[n]
}

// binDropLast removes the last position (one whose coordinates are not on
// Earth), keeping its capacity for the next.
func binDropLast(m *Message) { m.Positions = m.Positions[:len(m.Positions)-1] }

// binOnEarth reports whether lat and lon are finite coordinates.
func binOnEarth(lat, lon float64) bool {
	return lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180
}

func binNum(p *Position, key string, v float64) {
	p.Attrs = append(p.Attrs, Attribute{Key: key, Kind: AttrNumber, Num: v})
}

func binBool(p *Position, key string, v bool) {
	a := Attribute{Key: key, Kind: AttrBool}
	if v {
		a.Num = 1
	}
	p.Attrs = append(p.Attrs, a)
}

func binStr(p *Position, key, v string) {
	p.Attrs = append(p.Attrs, Attribute{Key: key, Kind: AttrString, Str: v})
}

// binIO adds a numbered I/O element (named "io" + id, without a string of
// its own). A value that a float64 would not hold exactly is kept as its
// decimal string.
func binIO(p *Position, id int, v int64) {
	if v > 1<<53 || v < -(1<<53) {
		p.Attrs = append(p.Attrs, Attribute{IO: id, Kind: AttrString, Str: strconv.FormatInt(v, 10)})
		return
	}
	p.Attrs = append(p.Attrs, Attribute{IO: id, Kind: AttrNumber, Num: float64(v)})
}

// binAlarm adds an alarm, joining it to those already set as Traccar does
// ("sos,powerCut"), once.
func binAlarm(p *Position, alarm string) {
	for i := range p.Attrs {
		if a := &p.Attrs[i]; a.Key == "alarm" {
			for _, have := range strings.Split(a.Str, ",") {
				if have == alarm {
					return
				}
			}
			a.Str += "," + alarm
			return
		}
	}
	binStr(p, "alarm", alarm)
}

// binSet replaces the attribute named key if the position has one, else
// adds it (a value sent twice in a frame, the last one wins).
func binSet(p *Position, a Attribute) {
	for i := range p.Attrs {
		if p.Attrs[i].Key == a.Key {
			p.Attrs[i] = a
			return
		}
	}
	p.Attrs = append(p.Attrs, a)
}

// binFinite reports whether v is a finite number.
func binFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// binHex is the lower-case hexadecimal of p.
func binHex(p []byte) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*len(p))
	for i, c := range p {
		b[2*i] = digits[c>>4]
		b[2*i+1] = digits[c&15]
	}
	return string(b)
}

// binIdentifier returns b as a string, reusing known when it is the same
// identifier (a connection's, or a datagram's sender), so that a frame that
// repeats its identifier allocates nothing.
func binIdentifier(b []byte, known string) string {
	if string(b) == known {
		return known
	}
	return string(b)
}

// The CRC tables, two big-endian bytes an entry: constants, so that they
// cannot change (TestCRCTables derives them again).
const crcARCTable = "" +
	"\x00\x00\xc0\xc1\xc1\x81\x01\x40\xc3\x01\x03\xc0\x02\x80\xc2\x41\xc6\x01\x06\xc0\x07\x80\xc7\x41\x05\x00\xc5\xc1\xc4\x81\x04\x40" +
	"\xcc\x01\x0c\xc0\x0d\x80\xcd\x41\x0f\x00\xcf\xc1\xce\x81\x0e\x40\x0a\x00\xca\xc1\xcb\x81\x0b\x40\xc9\x01\x09\xc0\x08\x80\xc8\x41" +
	"\xd8\x01\x18\xc0\x19\x80\xd9\x41\x1b\x00\xdb\xc1\xda\x81\x1a\x40\x1e\x00\xde\xc1\xdf\x81\x1f\x40\xdd\x01\x1d\xc0\x1c\x80\xdc\x41" +
	"\x14\x00\xd4\xc1\xd5\x81\x15\x40\xd7\x01\x17\xc0\x16\x80\xd6\x41\xd2\x01\x12\xc0\x13\x80\xd3\x41\x11\x00\xd1\xc1\xd0\x81\x10\x40" +
	"\xf0\x01\x30\xc0\x31\x80\xf1\x41\x33\x00\xf3\xc1\xf2\x81\x32\x40\x36\x00\xf6\xc1\xf7\x81\x37\x40\xf5\x01\x35\xc0\x34\x80\xf4\x41" +
	"\x3c\x00\xfc\xc1\xfd\x81\x3d\x40\xff\x01\x3f\xc0\x3e\x80\xfe\x41\xfa\x01\x3a\xc0\x3b\x80\xfb\x41\x39\x00\xf9\xc1\xf8\x81\x38\x40" +
	"\x28\x00\xe8\xc1\xe9\x81\x29\x40\xeb\x01\x2b\xc0\x2a\x80\xea\x41\xee\x01\x2e\xc0\x2f\x80\xef\x41\x2d\x00\xed\xc1\xec\x81\x2c\x40" +
	"\xe4\x01\x24\xc0\x25\x80\xe5\x41\x27\x00\xe7\xc1\xe6\x81\x26\x40\x22\x00\xe2\xc1\xe3\x81\x23\x40\xe1\x01\x21\xc0\x20\x80\xe0\x41" +
	"\xa0\x01\x60\xc0\x61\x80\xa1\x41\x63\x00\xa3\xc1\xa2\x81\x62\x40\x66\x00\xa6\xc1\xa7\x81\x67\x40\xa5\x01\x65\xc0\x64\x80\xa4\x41" +
	"\x6c\x00\xac\xc1\xad\x81\x6d\x40\xaf\x01\x6f\xc0\x6e\x80\xae\x41\xaa\x01\x6a\xc0\x6b\x80\xab\x41\x69\x00\xa9\xc1\xa8\x81\x68\x40" +
	"\x78\x00\xb8\xc1\xb9\x81\x79\x40\xbb\x01\x7b\xc0\x7a\x80\xba\x41\xbe\x01\x7e\xc0\x7f\x80\xbf\x41\x7d\x00\xbd\xc1\xbc\x81\x7c\x40" +
	"\xb4\x01\x74\xc0\x75\x80\xb5\x41\x77\x00\xb7\xc1\xb6\x81\x76\x40\x72\x00\xb2\xc1\xb3\x81\x73\x40\xb1\x01\x71\xc0\x70\x80\xb0\x41" +
	"\x50\x00\x90\xc1\x91\x81\x51\x40\x93\x01\x53\xc0\x52\x80\x92\x41\x96\x01\x56\xc0\x57\x80\x97\x41\x55\x00\x95\xc1\x94\x81\x54\x40" +
	"\x9c\x01\x5c\xc0\x5d\x80\x9d\x41\x5f\x00\x9f\xc1\x9e\x81\x5e\x40\x5a\x00\x9a\xc1\x9b\x81\x5b\x40\x99\x01\x59\xc0\x58\x80\x98\x41" +
	"\x88\x01\x48\xc0\x49\x80\x89\x41\x4b\x00\x8b\xc1\x8a\x81\x4a\x40\x4e\x00\x8e\xc1\x8f\x81\x4f\x40\x8d\x01\x4d\xc0\x4c\x80\x8c\x41" +
	"\x44\x00\x84\xc1\x85\x81\x45\x40\x87\x01\x47\xc0\x46\x80\x86\x41\x82\x01\x42\xc0\x43\x80\x83\x41\x41\x00\x81\xc1\x80\x81\x40\x40"

const crcX25Table = "" +
	"\x00\x00\x11\x89\x23\x12\x32\x9b\x46\x24\x57\xad\x65\x36\x74\xbf\x8c\x48\x9d\xc1\xaf\x5a\xbe\xd3\xca\x6c\xdb\xe5\xe9\x7e\xf8\xf7" +
	"\x10\x81\x01\x08\x33\x93\x22\x1a\x56\xa5\x47\x2c\x75\xb7\x64\x3e\x9c\xc9\x8d\x40\xbf\xdb\xae\x52\xda\xed\xcb\x64\xf9\xff\xe8\x76" +
	"\x21\x02\x30\x8b\x02\x10\x13\x99\x67\x26\x76\xaf\x44\x34\x55\xbd\xad\x4a\xbc\xc3\x8e\x58\x9f\xd1\xeb\x6e\xfa\xe7\xc8\x7c\xd9\xf5" +
	"\x31\x83\x20\x0a\x12\x91\x03\x18\x77\xa7\x66\x2e\x54\xb5\x45\x3c\xbd\xcb\xac\x42\x9e\xd9\x8f\x50\xfb\xef\xea\x66\xd8\xfd\xc9\x74" +
	"\x42\x04\x53\x8d\x61\x16\x70\x9f\x04\x20\x15\xa9\x27\x32\x36\xbb\xce\x4c\xdf\xc5\xed\x5e\xfc\xd7\x88\x68\x99\xe1\xab\x7a\xba\xf3" +
	"\x52\x85\x43\x0c\x71\x97\x60\x1e\x14\xa1\x05\x28\x37\xb3\x26\x3a\xde\xcd\xcf\x44\xfd\xdf\xec\x56\x98\xe9\x89\x60\xbb\xfb\xaa\x72" +
	"\x63\x06\x72\x8f\x40\x14\x51\x9d\x25\x22\x34\xab\x06\x30\x17\xb9\xef\x4e\xfe\xc7\xcc\x5c\xdd\xd5\xa9\x6a\xb8\xe3\x8a\x78\x9b\xf1" +
	"\x73\x87\x62\x0e\x50\x95\x41\x1c\x35\xa3\x24\x2a\x16\xb1\x07\x38\xff\xcf\xee\x46\xdc\xdd\xcd\x54\xb9\xeb\xa8\x62\x9a\xf9\x8b\x70" +
	"\x84\x08\x95\x81\xa7\x1a\xb6\x93\xc2\x2c\xd3\xa5\xe1\x3e\xf0\xb7\x08\x40\x19\xc9\x2b\x52\x3a\xdb\x4e\x64\x5f\xed\x6d\x76\x7c\xff" +
	"\x94\x89\x85\x00\xb7\x9b\xa6\x12\xd2\xad\xc3\x24\xf1\xbf\xe0\x36\x18\xc1\x09\x48\x3b\xd3\x2a\x5a\x5e\xe5\x4f\x6c\x7d\xf7\x6c\x7e" +
	"\xa5\x0a\xb4\x83\x86\x18\x97\x91\xe3\x2e\xf2\xa7\xc0\x3c\xd1\xb5\x29\x42\x38\xcb\x0a\x50\x1b\xd9\x6f\x66\x7e\xef\x4c\x74\x5d\xfd" +
	"\xb5\x8b\xa4\x02\x96\x99\x87\x10\xf3\xaf\xe2\x26\xd0\xbd\xc1\x34\x39\xc3\x28\x4a\x1a\xd1\x0b\x58\x7f\xe7\x6e\x6e\x5c\xf5\x4d\x7c" +
	"\xc6\x0c\xd7\x85\xe5\x1e\xf4\x97\x80\x28\x91\xa1\xa3\x3a\xb2\xb3\x4a\x44\x5b\xcd\x69\x56\x78\xdf\x0c\x60\x1d\xe9\x2f\x72\x3e\xfb" +
	"\xd6\x8d\xc7\x04\xf5\x9f\xe4\x16\x90\xa9\x81\x20\xb3\xbb\xa2\x32\x5a\xc5\x4b\x4c\x79\xd7\x68\x5e\x1c\xe1\x0d\x68\x3f\xf3\x2e\x7a" +
	"\xe7\x0e\xf6\x87\xc4\x1c\xd5\x95\xa1\x2a\xb0\xa3\x82\x38\x93\xb1\x6b\x46\x7a\xcf\x48\x54\x59\xdd\x2d\x62\x3c\xeb\x0e\x70\x1f\xf9" +
	"\xf7\x8f\xe6\x06\xd4\x9d\xc5\x14\xb1\xab\xa0\x22\x92\xb9\x83\x30\x7b\xc7\x6a\x4e\x58\xd5\x49\x5c\x3d\xe3\x2c\x6a\x1e\xf1\x0f\x78"
