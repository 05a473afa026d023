package fleetdevice

import (
	"math"
	"testing"

	"github.com/matryer/is"
)

// corpusLoginIMEI is the identifier a connection's login named, for the
// corpus's data frames that do not carry one.
const corpusLoginIMEI = "123456789012345"

// TestTeltonikaCorpus decodes every Teltonika capture of the corpus and
// compares the message with the row: the identifier, each position's
// values and I/O attributes, the reply byte for byte, and a frame whose
// CRC fails refused with ErrChecksum.
func TestTeltonikaCorpus(t *testing.T) {
	rows := loadCorpus(t, "teltonika.jsonl")
	ios := loadRowsAs[teltonikaIO](t, "teltonika.jsonl")
	if len(ios) != len(rows) {
		t.Fatalf("%d rows, %d read again", len(rows), len(ios))
	}
	var m Message // reused across rows, as a listener does
	for i, row := range rows {
		t.Run(row.Source, func(t *testing.T) {
			is := is.New(t)
			raw := row.raw(t)
			s := Session{Now: corpusNow}
			if row.Transport == "udp" {
				s.Transport = UDP
			} else {
				// A stream frame is what Split finds.
				n, err := Teltonika().Split(raw)
				is.NoErr(err)
				is.Equal(n, len(raw))
			}
			if row.Expect.IMEI == nil {
				s.Identifier = corpusLoginIMEI
			}
			m.Reset()
			err := Teltonika().Decode(raw, &s, &m)
			if row.Expect.CRCOK != nil && !*row.Expect.CRCOK {
				is.Equal(err, ErrChecksum)
				return
			}
			is.NoErr(err)
			switch {
			case row.Expect.Kind == "login":
				is.Equal(m.Kind, KindLogin)
				is.Equal(m.Identifier, *row.Expect.IMEI)
				is.Equal(s.Identifier, *row.Expect.IMEI) // the connection is named
				is.Equal(m.Reject, []byte{0})
			case row.Expect.IMEI != nil:
				is.Equal(m.Kind, KindPositions)
				is.Equal(m.Identifier, *row.Expect.IMEI) // a datagram names its sender
			default:
				is.Equal(m.Kind, KindPositions)
				is.Equal(m.Identifier, "") // named by the login
				is.Equal(s.Identifier, corpusLoginIMEI)
			}
			checkPositions(t, row, m.Positions)
			checkReply(t, row, m.Reply)
			checkTeltonikaIO(t, row, ios[i], m.Positions)
		})
	}
}

// teltonikaIO is what a Teltonika row states of each point's I/O
// elements, which the shared row type does not hold.
type teltonikaIO struct {
	Expect struct {
		Points []struct {
			Priority *float64           `json:"priority"`
			EventIO  *float64           `json:"event_io"`
			IO       map[string]float64 `json:"io"`
		} `json:"points"`
	} `json:"expect"`
}

// checkTeltonikaIO compares the I/O values a row states (in the corpus's
// names and units) with the attributes decoded (in the API's).
func checkTeltonikaIO(t *testing.T, row corpusRow, io teltonikaIO, got []Position) {
	t.Helper()
	names := map[string]struct {
		key   string
		scale float64
		bool  bool
	}{
		"ignition":           {"ignition", 1, true},
		"movement":           {"motion", 1, true},
		"ext_voltage_mV":     {"power", 1000, false},
		"battery_voltage_mV": {"battery", 1000, false},
		"total_odometer_m":   {"odometer", 1, false},
		"trip_odometer_m":    {"tripOdometer", 1, false},
		"gsm_signal":         {"rssi", 1, false},
		"pdop_x10":           {"pdop", 10, false},
		"hdop_x10":           {"hdop", 10, false},
	}
	for i, w := range io.Expect.Points {
		if i >= len(got) {
			return
		}
		attrs := map[string]Attribute{}
		for _, a := range got[i].Attrs {
			attrs[a.Name()] = a
		}
		for k, v := range w.IO {
			n, ok := names[k]
			if !ok {
				t.Fatalf("%s: unknown I/O name %q in the corpus", row.Source, k)
			}
			a, ok := attrs[n.key]
			switch {
			case !ok:
				t.Errorf("%s point %d: no %s", row.Source, i, n.key)
			case n.bool:
				if a.Kind != AttrBool || a.Value() != (v != 0) {
					t.Errorf("%s point %d: %s = %v, want %v", row.Source, i, n.key, a.Value(), v != 0)
				}
			default:
				if a.Kind != AttrNumber || math.Abs(a.Num-v/n.scale) > 1e-9 {
					t.Errorf("%s point %d: %s = %v, want %v", row.Source, i, n.key, a.Value(), v/n.scale)
				}
			}
		}
		if w.Priority != nil && attrs["priority"].Num != *w.Priority {
			t.Errorf("%s point %d: priority %v, want %v", row.Source, i, attrs["priority"].Num, *w.Priority)
		}
		if w.EventIO != nil && attrs["event"].Num != *w.EventIO {
			t.Errorf("%s point %d: event %v, want %v", row.Source, i, attrs["event"].Num, *w.EventIO)
		}
	}
}

// TestTeltonikaTraccarCaptures runs every capture of Traccar's Teltonika
// tests: framing, CRC, positions on Earth, and the values Traccar asserts
// that do not depend on the device's model.
func TestTeltonikaTraccarCaptures(t *testing.T) {
	testCaptures(t, Teltonika(), "teltonika.txt", []captureCheck{
		{21, "tag1Voltage", 3090.0},
		{28, "tag1Battery", 3030.0},
	})
}
