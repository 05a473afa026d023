package teltonika

import (
	"encoding/binary"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

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
	return binary.BigEndian.AppendUint32(b, uint32(devproto.CRC16ARC(body)))
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

// tkFullIO is a record with every I/O element API.md §14 names for
// Teltonika (no alarm raised but on every fifth record, a hard braking),
// and some it does not (data mode, sleep mode, GNSS status, speed,
// battery current, operator, ICCID): what a fleet's FMB with a CAN
// adapter, an iButton reader and temperature probes sends.
func tkFullIO(i int) tkRec {
	green := uint64(0)
	if i%5 == 0 {
		green = 2
	}
	minus55 := uint64(uint32(0xFFFFFFC9)) // -55: -5.5 °C
	r := tkRealistic(i)
	r.event = 239
	r.io = [4][]tkIOValue{
		{{239, 1}, {240, 1}, {21, 4}, {1, 1}, {2, 0}, {3, 0}, {4, 1}, {179, 0}, {180, 1}, {113, 87},
			{89, 55}, {81, 54}, {32, 85}, {253, green}, {247, 0}, {246, 0}, {252, 0}, {249, 0}, {255, 0},
			{236, 0}, {80, 1}, {200, 0}, {69, 1}},
		{{66, 13_821}, {67, 4_050}, {181, 9}, {182, 6}, {9, 4_500}, {10, 0}, {84, 452}, {85, 1_850},
			{24, 54}, {68, 0}},
		{{16, 8_765_432}, {199, 1_234}, {72, 215}, {73, minus55}, {74, 3000}, {75, 850}, {83, 123_456},
			{87, 123_456_789}, {102, 90_000}, {103, 89_000}, {241, 24_602}},
		{{78, 0x01A2B3C4D5E6F7C3}, {11, 8_937_020_401_234_567_890}},
	}
	return r
}

// tkFullIOFrame is a codec-8 frame of ten tkFullIO records.
func tkFullIOFrame() []byte {
	var recs []tkRec
	for i := range 10 {
		recs = append(recs, tkFullIO(i))
	}
	return tkFrame(tkBody(tkCodec8, recs))
}

// tkFullIOWant is what tkFullIO(1) decodes to, by name.
var tkFullIOWant = map[string]any{
	"priority": 0.0, "event": "239",
	"ignition": true, "motion": true, "rssi": 4.0,
	"din1": true, "din2": false, "din3": false, "din4": true, "dout1": false, "dout2": true,
	"battery_level": 87.0, "fuel_level": 55.0, "obd_speed_kmh": 54.0, "coolant_temp_c": 85.0,
	"power_v": 13.821, "battery_v": 4.05, "pdop": 0.9, "hdop": 0.6, "ain1": 4.5, "ain2": 0.0,
	"fuel_l": 45.2, "rpm": 1850.0,
	"odometer_km":      123_456.789, // the CAN bus's (87) rather than the device's (16)
	"trip_odometer_km": 1.234, "temp1_c": 21.5, "temp2_c": -5.5, "io74": 3000.0, "temp4_c": 85.0,
	"fuel_used_l": 12_345.6, "engine_hours": 1_500.0, // the vehicle's (102) rather than counted (103)
	"driver_identifier": "C3F7E6D5C4B3A201",
	"io80":              1.0, "io200": 0.0, "io69": 1.0, "io24": 54.0, "io68": 0.0, "io241": 24_602.0,
	"io11": "8937020401234567890",
}

// tkBeaconBlob is an element 385 of two beacons, an iBeacon with its
// battery and an Eddystone.
func tkBeaconBlob() []byte {
	b := []byte{0x01}
	b = append(b, 0x12) // iBeacon, battery
	b = append(b, make([]byte, 16)...)
	b[2] = 0xAB
	b = binary.BigEndian.AppendUint16(b, 7)
	b = binary.BigEndian.AppendUint16(b, 9)
	b = append(b, 0xC4)                       // rssi -60
	b = binary.BigEndian.AppendUint16(b, 300) // 3.00 V
	b = append(b, 0x00)                       // Eddystone
	b = append(b, make([]byte, 16)...)
	return append(b, 0xD0)
}

// tkTagBlob is an element 548 of one tag: rssi, id, name, temperature,
// humidity.
func tkTagBlob() []byte {
	tag := []byte{0, 1, 0xC0, 1, 6, 1, 2, 3, 4, 5, 6, 5, 4, 'E', 'Y', 'E', 0, 6, 2, 0x01, 0x02, 7, 1, 55}
	return append([]byte{0x01, byte(len(tag))}, tag...)
}
