package devicetest

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// H02 is a tracker of the H02 protocol (Sinotrack and others), in its
// text form: *HQ sentences, which name the device in each.
type H02 struct {
	ID string // the terminal id (10 digits, or 15)
	// Status is the 8 hex digits of status bits; FFFFFBFF when empty.
	Status string
	// Last is the position the answers to commands carry.
	Last Point
}

func (*H02) Protocol() string { return "h02" }

// Hello is nil: H02 has no login.
func (*H02) Hello() ([]byte, Expect) { return nil, nil }

// Report is one V1 sentence a point; H02 acknowledges none.
func (d *H02) Report(pts []Point) ([]byte, Expect) {
	return sentences(pts, d.Sentence), nil
}

// Sentence is the V1 sentence of p:
// *HQ,id,V1,hhmmss,A|V,DDMM.mmmm,N|S,DDDMM.mmmm,E|W,knots,course,ddmmyy,status#
func (d *H02) Sentence(p Point) string {
	t := p.Time.UTC()
	status := d.Status
	if status == "" {
		status = "FFFFFBFF"
	}
	return fmt.Sprintf("*HQ,%s,V1,%s,%s,%s,%s,%.2f,%03.0f,%s,%s#",
		d.ID, t.Format("150405"), validity(p.Valid), nmeaLat(p.Latitude), nmeaLon(p.Longitude),
		knots(p.Speed), p.Heading, t.Format("020106"), status)
}

// Heartbeat is HTBT, which the server echoes.
func (d *H02) Heartbeat() ([]byte, Expect) {
	s := "*HQ," + d.ID + ",HTBT#"
	return []byte(s), Text(s)
}

// Queclink is a Queclink @Track tracker (GV300 and the like): +RESP
// sentences, which name the device in each, numbered with Count.
type Queclink struct {
	IMEI    string // 15 digits
	Version string // the protocol version (6 hex digits); 270A04 when empty
	Name    string // the device name
	Count   uint16 // the count number of the next sentence
	// Cell is the serving cell sent with each position.
	MCC, MNC, LAC, CellID int
	// Now is the device's clock, for a heartbeat's send time; time.Now
	// when nil.
	Now func() time.Time
}

func (*Queclink) Protocol() string { return "queclink" }

// Hello is nil: @Track has no login.
func (*Queclink) Hello() ([]byte, Expect) { return nil, nil }

// Report is one +RESP:GTFRI sentence a point; the server acknowledges
// none.
func (d *Queclink) Report(pts []Point) ([]byte, Expect) {
	return sentences(pts, d.FRI), nil
}

func (d *Queclink) version() string {
	if d.Version == "" {
		return "270A04"
	}
	return d.Version
}

func (d *Queclink) count() string {
	c := d.Count
	d.Count++
	return fmt.Sprintf("%04X", c)
}

// FRI is the fixed-interval report of p, in the GV300's layout:
// +RESP:GTFRI,ver,imei,name,power,report id,number,hdop,speed,azimuth,
// altitude,lon,lat,UTC time,mcc,mnc,lac,cell,00,mileage,,,,battery,
// status,,,,send time,count$
func (d *Queclink) FRI(p Point) string {
	t := p.Time.UTC()
	hdop := "1"
	if !p.Valid {
		hdop = "0" // an accuracy of 0 is no fix
	}
	return fmt.Sprintf("+RESP:GTFRI,%s,%s,%s,12000,10,1,%s,%.1f,%.0f,%.1f,%.6f,%.6f,%s,%04d,%04d,%04X,%04X,00,0.0,,,,100,210000,,,,%s,%s$",
		d.version(), d.IMEI, d.Name, hdop, p.Speed, p.Heading, p.Altitude, p.Longitude, p.Latitude,
		t.Format("20060102150405"), d.MCC, d.MNC, d.LAC, d.CellID, t.Format("20060102150405"), d.count())
}

// Heartbeat is +ACK:GTHBD, which the server answers with +SACK:GTHBD,
// the version and the count number.
func (d *Queclink) Heartbeat() ([]byte, Expect) {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	count := d.count()
	s := fmt.Sprintf("+ACK:GTHBD,%s,%s,%s,%s,%s$", d.version(), d.IMEI, d.Name, now().UTC().Format("20060102150405"), count)
	return []byte(s), Text("+SACK:GTHBD," + d.version() + "," + count + "$")
}

// GPS103 is a Coban tracker (TK103B, TK102...): ';'-terminated sentences
// after a handshake.
type GPS103 struct {
	IMEI string // 15 digits
	// Offset is the device clock's offset from UTC: its sentences carry
	// the local date and time beside the UTC time of the fix.
	Offset time.Duration
	// Last is the position the answers to commands carry.
	Last Point
}

func (*GPS103) Protocol() string { return "gps103" }

// Hello is the handshake ##,imei:<imei>,A; answered LOAD.
func (d *GPS103) Hello() ([]byte, Expect) {
	return []byte("##,imei:" + d.IMEI + ",A;"), Text("LOAD")
}

// Report is one sentence a point; the server acknowledges none.
func (d *GPS103) Report(pts []Point) ([]byte, Expect) {
	return sentences(pts, d.Sentence), nil
}

// Sentence is the tracker report of p:
// imei:<imei>,tracker,<yymmddHHMM local>,,F,<hhmmss.sss UTC>,A|V,DDMM.mmmm,N|S,DDDMM.mmmm,E|W,knots,course;
func (d *GPS103) Sentence(p Point) string {
	t := p.Time.UTC()
	return fmt.Sprintf("imei:%s,tracker,%s,,F,%s,%s,%s,%s,%.2f,%.2f;",
		d.IMEI, t.Add(d.Offset).Format("0601021504"), t.Format("150405.000"), validity(p.Valid),
		nmeaLat(p.Latitude), nmeaLon(p.Longitude), knots(p.Speed), p.Heading)
}

// Heartbeat is the bare IMEI, answered ON.
func (d *GPS103) Heartbeat() ([]byte, Expect) {
	return []byte(d.IMEI + ";"), Text("ON")
}

// sentences is the sentence of each point, one after the other.
func sentences(pts []Point, sentence func(Point) string) []byte {
	var b []byte
	for _, p := range pts {
		b = append(b, sentence(p)...)
	}
	return b
}

func validity(valid bool) string {
	if valid {
		return "A"
	}
	return "V"
}

// nmeaLat is DDMM.mmmm,N|S.
func nmeaLat(v float64) string {
	deg, mins := degMin(v, 4)
	return fmt.Sprintf("%02d%07.4f,%s", deg, mins, hemisphere(v, "N", "S"))
}

// nmeaLon is DDDMM.mmmm,E|W.
func nmeaLon(v float64) string {
	deg, mins := degMin(v, 4)
	return fmt.Sprintf("%03d%07.4f,%s", deg, mins, hemisphere(v, "E", "W"))
}

func hemisphere(v float64, pos, neg string) string {
	if v < 0 {
		return neg
	}
	return pos
}

// sentenceCommand recognises a server's command sentence from first to
// the first last.
func sentenceCommand(b []byte, first, last byte) (int, error) {
	if len(b) > 0 && b[0] != first {
		return 0, fmt.Errorf("%w: %q is not a command", ErrUnexpected, b)
	}
	if i := bytes.IndexByte(b, last); i >= 0 {
		return i + 1, nil
	}
	if len(b) > 1024 {
		return 0, fmt.Errorf("%w: %q: no end of command", ErrUnexpected, b)
	}
	return 0, nil
}

// Command recognises a command sentence (`*` to `#`).
func (*H02) Command(b []byte) (int, error) { return sentenceCommand(b, '*', '#') }

// Answer reads a command sentence `*HQ,<id>,<command>,<hhmmss>,...#`
// and answers as the device does, with a V4 sentence that names the
// command, its outcome and its time, then the device's last position
// (Last): `*HQ,<id>,V4,S20,DONE,<hhmmss>,<time>,A,...#`.
func (d *H02) Answer(cmd []byte) ([]byte, error) {
	f := strings.Split(strings.TrimSuffix(string(cmd), "#"), ",")
	if n, err := d.Command(cmd); err != nil || n != len(cmd) || len(f) < 4 || f[0] != "*HQ" || f[1] != d.ID {
		return nil, fmt.Errorf("%w: %q is not a command to %s", ErrUnexpected, cmd, d.ID)
	}
	p := d.Last
	t := p.Time.UTC()
	status := d.Status
	if status == "" {
		status = "FFFFFBFF"
	}
	return fmt.Appendf(nil, "*HQ,%s,V4,%s,DONE,%s,%s,%s,%s,%s,%.2f,%03.0f,%s,%s#",
		d.ID, f[2], f[3], t.Format("150405"), validity(p.Valid), nmeaLat(p.Latitude), nmeaLon(p.Longitude),
		knots(p.Speed), p.Heading, t.Format("020106"), status), nil
}

// Command recognises a command sentence (`**,imei:...;`).
func (*GPS103) Command(b []byte) (int, error) { return sentenceCommand(b, '*', ';') }

// Answer reads a command sentence `**,imei:<imei>,<command>;` and
// answers as a Coban tracker does: J (cut the oil) and K (restore it)
// with a report of its last position (Last) whose keyword is jt or kt, B
// with a tracker report; the others with none.
func (d *GPS103) Answer(cmd []byte) ([]byte, error) {
	text, ok := strings.CutPrefix(string(cmd), "**,imei:"+d.IMEI+",")
	if n, err := d.Command(cmd); err != nil || n != len(cmd) || !ok {
		return nil, fmt.Errorf("%w: %q is not a command to %s", ErrUnexpected, cmd, d.IMEI)
	}
	keyword := map[string]string{"J;": "jt", "K;": "kt", "B;": "tracker"}[text]
	if keyword == "" {
		return nil, nil
	}
	return []byte(strings.Replace(d.Sentence(d.Last), ",tracker,", ","+keyword+",", 1)), nil
}

// Command recognises an AT command (`AT+GT...$`).
func (*Queclink) Command(b []byte) (int, error) {
	if len(b) > 0 && !bytes.HasPrefix([]byte("AT+GT"), b[:min(len(b), 5)]) {
		return 0, fmt.Errorf("%w: %q is not an AT command", ErrUnexpected, b)
	}
	return sentenceCommand(b, 'A', '$')
}

// Answer reads an AT command `AT+GTxxx=<password>,...,<serial>$` and
// answers as the device does, `+ACK:GTxxx,<version>,<imei>,<name>,
// [<what>,]<serial>,<send time>,<count>$`, echoing its serial number;
// GTRTO names what it did (1 RTL, 3 REBOOT, 8 VER...).
func (d *Queclink) Answer(cmd []byte) ([]byte, error) {
	n, err := d.Command(cmd)
	text := strings.TrimSuffix(string(cmd), "$")
	name, params, ok := strings.Cut(strings.TrimPrefix(text, "AT+"), "=")
	f := strings.Split(params, ",")
	if err != nil || n != len(cmd) || !ok || len(f) < 2 {
		return nil, fmt.Errorf("%w: %q is not one AT command", ErrUnexpected, cmd)
	}
	serial := f[len(f)-1]
	what := ""
	if name == "GTRTO" {
		sub, known := map[string]string{"0": "GPS", "1": "RTL", "2": "READ", "3": "REBOOT", "8": "VER"}[f[1]]
		if !known {
			return nil, nil // a subcommand the device does not know: no answer
		}
		what = sub + ","
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	return fmt.Appendf(nil, "+ACK:%s,%s,%s,%s,%s%s,%s,%s$", name, d.version(), d.IMEI, d.Name, what, serial,
		now().UTC().Format("20060102150405"), d.count()), nil
}
