package fleetdevice

import "encoding/binary"

// A Teltonika encoder for the tests: it builds the frames a device sends,
// so that tests and benchmarks can state records by their values.

// tkIOValue is one I/O element of a record.
type tkIOValue struct {
	id    uint16
	value uint64
}

// tkRec is one AVL record.
type tkRec struct {
	ms            int64
	priority      byte
	lon, lat      int32 // 1e-7 degrees
	alt           int16
	angle         uint16
	sats          byte
	speed         uint16
	event         uint16
	io            [4][]tkIOValue // the 1-, 2-, 4- and 8-byte groups
	variable      []tkIOValue    // codec 8E: value is an index into blobs
	blobs         [][]byte
	generation    byte // codec 16
	extended16    [][16]byte
	extended16IDs []uint16
}

// tkBody encodes codec, N, the records and N.
func tkBody(codec byte, recs []tkRec) []byte {
	wide := codec == tkCodec8E
	wideID := wide || codec == tkCodec16
	b := []byte{codec, byte(len(recs))}
	n := func(v int, two bool) {
		if two {
			b = binary.BigEndian.AppendUint16(b, uint16(v))
		} else {
			b = append(b, byte(v))
		}
	}
	for _, r := range recs {
		b = binary.BigEndian.AppendUint64(b, uint64(r.ms))
		b = append(b, r.priority)
		b = binary.BigEndian.AppendUint32(b, uint32(r.lon))
		b = binary.BigEndian.AppendUint32(b, uint32(r.lat))
		b = binary.BigEndian.AppendUint16(b, uint16(r.alt))
		b = binary.BigEndian.AppendUint16(b, r.angle)
		b = append(b, r.sats)
		b = binary.BigEndian.AppendUint16(b, r.speed)
		n(int(r.event), wideID)
		if codec == tkCodec16 {
			b = append(b, r.generation)
		}
		total := len(r.variable) + len(r.extended16)
		for _, g := range r.io {
			total += len(g)
		}
		n(total, wide)
		for i, g := range r.io {
			size := 1 << i
			n(len(g), wide)
			for _, e := range g {
				n(int(e.id), wideID)
				for k := size - 1; k >= 0; k-- {
					b = append(b, byte(e.value>>(8*k)))
				}
			}
		}
		if len(r.extended16) > 0 {
			n(len(r.extended16), wide)
			for i, v := range r.extended16 {
				n(int(r.extended16IDs[i]), wideID)
				b = append(b, v[:]...)
			}
		}
		if wide {
			n(len(r.variable), true)
			for _, e := range r.variable {
				n(int(e.id), true)
				blob := r.blobs[e.value]
				n(len(blob), true)
				b = append(b, blob...)
			}
		}
	}
	return append(b, byte(len(recs)))
}

// tkFrame wraps a body in a TCP data frame with its CRC.
func tkFrame(body []byte) []byte {
	b := make([]byte, 8, 12+len(body))
	binary.BigEndian.PutUint32(b[4:], uint32(len(body)))
	b = append(b, body...)
	return binary.BigEndian.AppendUint32(b, uint32(crcARC(body)))
}

// tkDatagram wraps a body in a UDP datagram.
func tkDatagram(packetID uint16, avlID byte, imei string, body []byte) []byte {
	b := []byte{0, 0}
	b = binary.BigEndian.AppendUint16(b, packetID)
	b = append(b, 0x01, avlID)
	b = binary.BigEndian.AppendUint16(b, uint16(len(imei)))
	b = append(b, imei...)
	b = append(b, body...)
	binary.BigEndian.PutUint16(b, uint16(len(b)-2))
	return b
}

// tkLogin is the login of identifier.
func tkLogin(identifier string) []byte {
	return append([]byte{0, byte(len(identifier))}, identifier...)
}

// tkRealistic is a record with the I/O elements an FMB920 sends by
// default (ignition, movement, data mode, GSM signal, sleep mode, GNSS
// status, digital input, PDOP, HDOP, external and battery voltages, speed,
// cell, battery current, trip and total odometer, operator, and an 8-byte
// user value).
func tkRealistic(i int) tkRec {
	return tkRec{
		ms:       1_700_000_000_000 + int64(i)*30_000,
		priority: 0,
		lon:      21_0123456 + int32(i)*1000,
		lat:      54_6789012 - int32(i)*1000,
		alt:      112, angle: 270, sats: 11, speed: 54,
		event: 0,
		io: [4][]tkIOValue{
			{{239, 1}, {240, 1}, {80, 1}, {21, 5}, {200, 0}, {69, 1}, {1, 0}},
			{{181, 9}, {182, 6}, {66, 13_821}, {24, 54}, {205, 31_234}, {206, 4_321}, {67, 4_050}, {68, 0}},
			{{241, 24_602}, {199, 1_234}, {16, 8_765_432}},
			{{238, 123_456_789_012}},
		},
	}
}
