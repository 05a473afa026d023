package fleet

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unsafe"
)

// The binary form of a point's attributes, as stores keep them: compact
// (15 typical attributes of a tracker take about 60 bytes) and the same in
// every store, so that a row written by one release is read by the next.
// The form is stored: change it only by a new version byte.
//
//	attributes := version(1) attribute*
//	attribute  := name value
//	name       := 0x00..0x7f              a name of attrCodes, by its index
//	            | 0x80 uvarint(N)         "io" followed by N in decimal (Teltonika's raw I/O)
//	            | 0x81 uvarint(len) bytes any other name
//	value      := 0x00 | 0x01             false, true
//	            | 0x02 uvarint(len) bytes text (UTF-8)
//	            | 0x03 8 bytes            a number, IEEE 754 little-endian
//	            | 0x04+d varint(n)        the number n/10^d (d 0..3), when that is exactly it

const attrCodecVersion = 1

// attrCodes are the names written as one byte. Append only: a name's
// index is stored.
var attrCodes = [...]string{
	AttrIgnition, AttrMotion, AttrAlarm, AttrPowerV, "battery_v", "battery_level", "charging", AttrOdometerKm,
	"trip_odometer_km", AttrEngineHours, AttrFuelLevel, AttrFuelL, "fuel_used_l", "rpm", "obd_speed_kmh", "coolant_temp_c",
	"temp1_c", "temp2_c", "temp3_c", "temp4_c", AttrDriverIdentifier, "din1", "din2", "din3", "din4",
	"dout1", "dout2", "dout3", "dout4", "ain1", "ain2", "ain3", "ain4", "rssi", "hdop", "pdop", "accuracy_m", "event",
}

// attrCode returns the code of name in attrCodes.
func attrCode(name string) (byte, bool) {
	for i := range attrCodes {
		if attrCodes[i] == name {
			return byte(i), true
		}
	}
	return 0, false
}

var pow10 = [...]float64{1, 10, 100, 1000}

// ioNumber returns N when name is "io" followed by N in its canonical
// decimal form.
func ioNumber(name string) (uint64, bool) {
	if len(name) < 3 || len(name) > 12 || name[0] != 'i' || name[1] != 'o' || (name[2] == '0' && len(name) > 3) {
		return 0, false
	}
	n, err := strconv.ParseUint(name[2:], 10, 64)
	return n, err == nil
}

// AppendBinary appends the binary form of a (in its order) to b; nothing
// for no attributes, so that a store keeps NULL.
func (a Attributes) AppendBinary(b []byte) ([]byte, error) {
	if len(a) == 0 {
		return b, nil
	}
	b = append(b, attrCodecVersion)
	for _, x := range a {
		if c, ok := attrCode(x.Name); ok {
			b = append(b, c)
		} else if n, ok := ioNumber(x.Name); ok {
			b = append(b, 0x80)
			b = binary.AppendUvarint(b, n)
		} else {
			b = append(b, 0x81)
			b = binary.AppendUvarint(b, uint64(len(x.Name)))
			b = append(b, x.Name...)
		}
		switch x.Kind {
		case AttrBool:
			if x.Num != 0 {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case AttrText:
			b = append(b, 2)
			b = binary.AppendUvarint(b, uint64(len(x.Text)))
			b = append(b, x.Text...)
		default:
			b = appendAttrNumber(b, x.Num)
		}
	}
	return b, nil
}

// appendAttrNumber writes f as a scaled integer when one of up to three
// decimals is exactly it, else as its eight bytes.
func appendAttrNumber(b []byte, f float64) []byte {
	if math.Abs(f) < 1<<50 && !(f == 0 && math.Signbit(f)) {
		for d, p := range pow10 {
			if r := math.Round(f * p); r/p == f {
				b = append(b, byte(4+d))
				return binary.AppendVarint(b, int64(r))
			}
		}
	}
	b = append(b, 3)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

var errAttrCodec = errors.New("fleet: attributes: malformed binary form")

// UnmarshalBinary reads attributes that AppendBinary wrote (none from no
// bytes). The result shares no memory with data.
func (a *Attributes) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		*a = nil
		return nil
	}
	var buf [MaxPointAttributes]Attribute // decoded here, then copied once at its size
	out, err := decodeAttrs(buf[:0], string(data))
	if err != nil {
		return err
	}
	*a = append(Attributes(nil), out...)
	return nil
}

// AttributeBlobs decodes the binary forms (AppendBinary's) of many points'
// attributes at once, as a store reads a page of points: Add each point's
// bytes as its row is read, then Decode. The decoded attributes share
// memory (their texts one string, their attributes a few arrays) instead
// of taking allocations of their own for each point; each point's
// Attributes has a capacity of its length, so that appending to it copies.
// The zero value is ready to use.
type AttributeBlobs struct {
	data []byte
	ends []int
}

// Add copies one point's binary form (none for no bytes).
func (b *AttributeBlobs) Add(data []byte) {
	b.data = append(b.data, data...)
	b.ends = append(b.ends, len(b.data))
}

// Len returns how many points were added.
func (b *AttributeBlobs) Len() int { return len(b.ends) }

// attrBlock is how many attributes Decode allocates at a time.
const attrBlock = 512

// Decode returns the attributes of each point added, in order (nil for a
// point without any), and forgets them.
func (b *AttributeBlobs) Decode() ([]Attributes, error) {
	out := make([]Attributes, len(b.ends))
	all := string(b.data)
	var block Attributes
	start := 0
	for i, end := range b.ends {
		if end == start {
			continue
		}
		// A point holds at most MaxPointAttributes, each of two bytes at
		// least: with that much room, its attributes stay in this block.
		if room := min((end-start)/2, MaxPointAttributes); cap(block)-len(block) < room {
			block = make(Attributes, 0, max(attrBlock, room))
		}
		next, err := decodeAttrs(block, all[start:end])
		if err != nil {
			return nil, err
		}
		out[i] = next[len(block):len(next):len(next)]
		block, start = next, end
	}
	b.data, b.ends = b.data[:0], b.ends[:0]
	return out, nil
}

// At returns point i's binary form as added (empty for a point without
// attributes). It shares memory with b until the next Add or Decode.
func (b *AttributeBlobs) At(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.data[start:b.ends[i]]
}

// AppendJSON appends point i's attributes as a JSON object, the bytes
// Attributes.AppendJSON writes of them once decoded, straight from their
// binary form: no Attributes are made, and a number stored as a scaled
// integer is written from its digits. A point without attributes is {}.
func (b *AttributeBlobs) AppendJSON(dst []byte, i int) ([]byte, error) {
	return AppendAttributesJSON(dst, b.At(i))
}

// attrCodeKeys are the names of attrCodes as JSON object keys: "name":.
var attrCodeKeys = func() (t [len(attrCodes)]string) {
	for i, n := range attrCodes {
		t[i] = `"` + n + `":`
	}
	return t
}()

// AppendAttributesJSON appends the attributes of data, one binary form
// (AppendBinary's), to dst as the JSON object Attributes.AppendJSON writes
// of them once decoded; no bytes are {}. Malformed bytes are an error, as
// decoding them is.
func AppendAttributesJSON(dst []byte, data []byte) ([]byte, error) {
	if len(data) == 0 {
		return append(dst, "{}"...), nil
	}
	// data read in place as a string: the texts and names read from it
	// are copied into out, and nothing of it outlives the call.
	r, err := newAttrReader(unsafe.String(unsafe.SliceData(data), len(data)))
	if err != nil {
		return dst, err
	}
	out := append(dst, '{')
	var t attrToken
	for {
		more, err := r.next(&t)
		if err != nil {
			return dst, err
		}
		if !more {
			return append(out, '}'), nil
		}
		if r.n > 1 {
			out = append(out, ',')
		}
		switch {
		case t.code >= 0:
			out = append(out, attrCodeKeys[t.code]...)
		case t.name == "":
			out = strconv.AppendUint(append(out, `"io`...), t.io, 10)
			out = append(out, `":`...)
		default:
			out = append(appendJSONString(out, t.name), ':')
		}
		switch {
		case t.tag == 0:
			out = append(out, "false"...)
		case t.tag == 1:
			out = append(out, "true"...)
		case t.tag == 2:
			out = appendJSONString(out, t.text)
		case t.tag == 3:
			out = appendJSONNumber(out, t.num)
		case t.scaled > -1e15 && t.scaled < 1e15:
			// The decimal scaled/10^d has at most 15 significant digits,
			// and float64(scaled)/10^d is the float64 nearest to it: that
			// decimal is the shortest that reads back as the number
			// (appendJSONNumber), written from its digits.
			out = appendDecimal(out, t.scaled, int(t.tag-4))
		default:
			out = appendJSONNumber(out, t.num)
		}
	}
}

// ioNames are the names io0 to io511 of Teltonika's raw I/O, made once so
// that decoding one takes no allocation.
var ioNames = func() (t [512]string) {
	for i := range t {
		t[i] = "io" + strconv.Itoa(i)
	}
	return t
}()

// decodeAttrs appends the attributes of data, one binary form, to dst: its
// texts are substrings of data. It allocates only when dst is too small.
func decodeAttrs(dst Attributes, data string) (Attributes, error) {
	r, err := newAttrReader(data)
	if err != nil {
		return nil, err
	}
	var t attrToken
	for {
		more, err := r.next(&t)
		if err != nil {
			return nil, err
		}
		if !more {
			return dst, nil
		}
		x := Attribute{Name: t.name, Num: t.num}
		switch {
		case t.code >= 0:
			x.Name = attrCodes[t.code]
		case t.name == "":
			if t.io < uint64(len(ioNames)) {
				x.Name = ioNames[t.io]
			} else {
				x.Name = "io" + strconv.FormatUint(t.io, 10)
			}
		}
		switch t.tag {
		case 0, 1:
			x.Kind = AttrBool
		case 2:
			x.Kind, x.Text = AttrText, t.text
		}
		dst = append(dst, x)
	}
}

// attrReader reads the attributes of one binary form in turn.
type attrReader struct {
	s string // what is left to read
	n int    // attributes read
}

// attrToken is one attribute of a binary form as it is written.
type attrToken struct {
	code   int    // its name's index in attrCodes, or -1
	io     uint64 // with code -1 and name "": the N of Teltonika's "io<N>"
	name   string // with code -1: any other name
	tag    byte   // its value's form: 0, 1 false, true; 2 text; 3 eight bytes; 4+d scaled
	text   string // tag 2
	num    float64
	scaled int64 // tags 4 to 7: num is scaled/10^(tag-4)
}

func newAttrReader(data string) (attrReader, error) {
	if data[0] != attrCodecVersion {
		return attrReader{}, errAttrCodec
	}
	return attrReader{s: data[1:]}, nil
}

// next reads the next attribute into t, reporting false when none is left.
func (r *attrReader) next(t *attrToken) (bool, error) {
	if r.s == "" {
		return false, nil
	}
	if r.n == MaxPointAttributes {
		return false, errAttrCodec
	}
	r.n++
	data := r.s
	c := data[0]
	data = data[1:]
	t.code, t.name = -1, ""
	switch {
	case int(c) < len(attrCodes):
		t.code = int(c)
	case c == 0x80:
		n, k := uvarintString(data)
		if k <= 0 {
			return false, errAttrCodec
		}
		t.io, data = n, data[k:]
	case c == 0x81:
		s, rest, ok := attrBytes(data)
		if !ok {
			return false, errAttrCodec
		}
		t.name, data = s, rest
	default:
		return false, errAttrCodec
	}
	if len(data) == 0 {
		return false, errAttrCodec
	}
	t.tag = data[0]
	data = data[1:]
	switch {
	case t.tag <= 1:
		t.num = float64(t.tag)
	case t.tag == 2:
		s, rest, ok := attrBytes(data)
		if !ok {
			return false, errAttrCodec
		}
		t.text, t.num, data = s, 0, rest
	case t.tag == 3:
		if len(data) < 8 {
			return false, errAttrCodec
		}
		t.num, data = math.Float64frombits(binary.LittleEndian.Uint64([]byte(data[:8]))), data[8:]
	case t.tag <= 7:
		u, k := uvarintString(data)
		if k <= 0 {
			return false, errAttrCodec
		}
		n := int64(u >> 1) // zig-zag, as binary.AppendVarint writes it
		if u&1 != 0 {
			n = ^n
		}
		t.scaled, t.num, data = n, float64(n)/pow10[t.tag-4], data[k:]
	default:
		return false, errAttrCodec
	}
	r.s = data
	return true, nil
}

// uvarintString is binary.Uvarint of a string.
func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -(i + 1) // overflow
			}
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// attrBytes reads a length-prefixed run of bytes.
func attrBytes(data string) (string, string, bool) {
	n, k := uvarintString(data)
	if k <= 0 || n > uint64(len(data)-k) {
		return "", "", false
	}
	return data[k : k+int(n)], data[k+int(n):], true
}
