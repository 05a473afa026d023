package fleetdevice

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// gt06Extra is what a GT06 row states beyond the shared row type.
type gt06Extra struct {
	Expect struct {
		MessageType   string `json:"message_type"`
		LoginTZOffset *int   `json:"login_tz_offset_min"`
		Points        []struct {
			Ignition *bool `json:"ignition"`
		} `json:"points"`
	} `json:"expect"`
}

// TestGT06Corpus decodes every GT06 capture of the corpus and compares the
// message with the row: the kind, the identifier and time zone of a login,
// each position's values, the acknowledgement byte for byte, and a frame
// whose CRC fails refused with ErrChecksum.
func TestGT06Corpus(t *testing.T) {
	rows := loadCorpus(t, "gt06.jsonl")
	extras := loadRowsAs[gt06Extra](t, "gt06.jsonl")
	if len(extras) != len(rows) {
		t.Fatalf("%d rows, %d read again", len(rows), len(extras))
	}
	var m Message
	for i, row := range rows {
		t.Run(row.Source, func(t *testing.T) {
			is := is.New(t)
			raw := row.raw(t)
			n, err := GT06().Split(raw)
			is.NoErr(err)
			is.Equal(n, len(raw)) // one whole frame
			s := Session{Now: corpusNow}
			if row.Expect.IMEI == nil {
				s.Identifier = corpusLoginIMEI
			}
			m.Reset()
			err = GT06().Decode(raw, &s, &m)
			if row.Expect.CRCOK != nil && !*row.Expect.CRCOK {
				is.Equal(err, ErrChecksum)
				return
			}
			is.NoErr(err)
			x := extras[i].Expect
			switch x.MessageType {
			case "0x01":
				is.Equal(m.Kind, KindLogin)
				is.Equal(m.Identifier, *row.Expect.IMEI)
				is.Equal(s.Identifier, *row.Expect.IMEI)
				is.Equal(len(m.Reject), 0) // refused by closing
				if x.LoginTZOffset != nil {
					is.True(s.HasOffset)
					is.Equal(s.Offset, time.Duration(*x.LoginTZOffset)*time.Minute)
				} else {
					is.True(!s.HasOffset)
				}
			case "0x13":
				is.Equal(m.Kind, KindHeartbeat)
				is.Equal(m.Identifier, "")
			default:
				is.Equal(m.Kind, KindPositions)
				is.Equal(m.Identifier, "")
				is.Equal(s.Identifier, corpusLoginIMEI)
			}
			checkPositions(t, row, m.Positions)
			checkReply(t, row, m.Reply)
			// The ignition of the GPS block's course and status word, where
			// no status block follows (whose ACC bit prevails, as in
			// Traccar: TestGT06StatusIgnitionPrevails).
			for j, w := range x.Points {
				if w.Ignition == nil || j >= len(m.Positions) || gtHasStatus(raw[3], gtStandard) {
					continue
				}
				got, ok := gtAttr(m.Positions[j], "ignition")
				is.True(ok)
				is.Equal(got.Value(), *w.Ignition)
			}
		})
	}
}

// gtAttr finds an attribute by name.
func gtAttr(p Position, name string) (Attribute, bool) {
	for _, a := range p.Attrs {
		if a.Name() == name {
			return a, true
		}
	}
	return Attribute{}, false
}

// TestGT06TraccarCaptures runs every capture of Traccar's GT06 tests:
// framing, CRC, positions on Earth, and the values Traccar asserts of
// those that carry a position (where its model override only names the
// layout, which the decoder recognises).
func TestGT06TraccarCaptures(t *testing.T) {
	testCaptures(t, GT06(), "gt06.txt", []captureCheck{
		{24, "alarm", "tampering"},
		{28, "driverUniqueId", "20534657"},
		{54, "eventFiles", "EVENT_862798052429087_00000000_2024_11_12_22_20_06_I_56.mp4,EVENT_862798052429087_00000000_2024_11_12_22_20_06_F_55.mp4"},
		{89, "altitude", 678.0},
		{93, "driverUniqueId", "bf0000012ca7e001"},
		{100, "batteryLevel", 93.0},
		{104, "alarm", "sos"},
		{108, "temp1", 0.32},
		{112, "event", 105.0},
		{116, "ignition", false},
		{127, "alarm", "sos"},
		{138, "drivingTime", 0.0},
		{165, "alarm", "tampering"},
		{173, "alarm", "tampering"},
		{184, "ignition", false},
		{209, "temp1", 28.0},
		{248, "batteryLevel", 100.0},
		{270, "alarm", "removing"},
		{284, "alarm", "removing"},
		{597, "hours", 22140000.0},
		{607, "battery", 4.0},
		{611, "driverUniqueId", "0235313030363538303642444603"},
		{640, "driverUniqueId", "c3000001453f9201"},
		{644, "battery", 4.0},
		{648, "driverUniqueId", "c3000001453f9201"},
		{652, "event", 234.0},
	})
}
