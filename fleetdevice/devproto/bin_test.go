package devproto

import (
	"math/rand/v2"
	"testing"
)

// TestCRCTables derives the CRC tables from their polynomials again,
// checks each CRC's standard check value (the CRC of "123456789"), and
// compares each with the CRC computed a bit at a time on random bytes of
// every length up to 64.
func TestCRCTables(t *testing.T) {
	bitwise := func(poly, init uint16, b []byte) uint16 {
		c := init
		for _, x := range b {
			c ^= uint16(x)
			for range 8 {
				if c&1 != 0 {
					c = c>>1 ^ poly
				} else {
					c >>= 1
				}
			}
		}
		return c
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name       string
		table      string
		tables     int
		poly, init uint16
		xorOut     uint16
		crc        func([]byte) uint16
		check      uint16
	}{
		{"ARC", crcARCTable, 8, 0xA001, 0, 0, CRC16ARC, 0xBB3D},
		{"X-25", crcX25Table, 1, 0x8408, 0xFFFF, 0xFFFF, CRC16X25, 0x906E},
	} {
		if len(c.table) != 512*c.tables {
			t.Fatalf("%s: table of %d bytes", c.name, len(c.table))
		}
		for i := range 256 {
			v := bitwise(c.poly, 0, []byte{byte(i)})
			for k := range c.tables {
				if got := crcEntry(c.table, k, byte(i)); got != v {
					t.Errorf("%s: entry %d of table %d is %#04x, want %#04x", c.name, i, k, got, v)
				}
				v = v>>8 ^ bitwise(c.poly, 0, []byte{byte(v)})
			}
		}
		if got := c.crc([]byte("123456789")); got != c.check {
			t.Errorf("%s(123456789) = %#04x, want %#04x", c.name, got, c.check)
		}
		for n := range 65 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			if got, want := c.crc(b), bitwise(c.poly, c.init, b)^c.xorOut; got != want {
				t.Errorf("%s(%x) = %#04x, want %#04x", c.name, b, got, want)
			}
		}
	}
}
