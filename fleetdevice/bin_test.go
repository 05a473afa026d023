package fleetdevice

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// loadRowsAs reads the rows of testdata/corpus/name again as T, for what
// a protocol's rows state beyond the shared row type, in the order
// loadCorpus gives them.
func loadRowsAs[T any](t *testing.T, name string) []T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	var rows []T
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r T
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestCRCTables derives the CRC tables from their polynomials again, and
// checks each CRC's standard check value (the CRC of "123456789").
func TestCRCTables(t *testing.T) {
	for _, c := range []struct {
		name  string
		table string
		poly  uint16
		crc   func([]byte) uint16
		check uint16
	}{
		{"ARC", crcARCTable, 0xA001, crcARC, 0xBB3D},
		{"X-25", crcX25Table, 0x8408, crcX25, 0x906E},
	} {
		if len(c.table) != 512 {
			t.Fatalf("%s: table of %d bytes", c.name, len(c.table))
		}
		for i := 0; i < 256; i++ {
			v := uint16(i)
			for range 8 {
				if v&1 != 0 {
					v = v>>1 ^ c.poly
				} else {
					v >>= 1
				}
			}
			if got := uint16(c.table[2*i])<<8 | uint16(c.table[2*i+1]); got != v {
				t.Errorf("%s: entry %d is %#04x, want %#04x", c.name, i, got, v)
			}
		}
		if got := c.crc([]byte("123456789")); got != c.check {
			t.Errorf("%s(123456789) = %#04x, want %#04x", c.name, got, c.check)
		}
	}
}
