package fleetdevice

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Helpers shared by the text protocols (H02's text frames, Queclink,
// GPS103) and OsmAnd.
//
// The text decoders read their frames with regular expressions that follow
// Traccar's decoders (github.com/traccar/traccar, Apache-2.0) field by
// field: patternBuilder spells them the way Traccar's PatternBuilder does,
// and groups reads the groups of a match the way Traccar's Parser does, so
// that a message decodes to the same values. Go's regexp matches in linear
// time and picks, among the matches, the one a backtracking engine would
// (leftmost-first), so the groups are those Traccar reads.

// knotsToKmh converts knots to km/h (API.md §13).
const knotsToKmh = 1.852

// textMaxAttrs bounds the attributes a text decoder gives one position.
const textMaxAttrs = 64

// textControl reports whether b is a control byte that no text frame may
// hold (API.md §13: all but CR, LF and TAB).
func textControl(b byte) bool {
	return (b < 0x20 && b != '\r' && b != '\n' && b != '\t') || b == 0x7f
}

// hasTextControl reports whether b holds a control byte of textControl.
func hasTextControl(b []byte) bool {
	for _, c := range b {
		if textControl(c) {
			return true
		}
	}
	return false
}

// leadingCRLF is the number of CR and LF bytes b starts with: the line
// ends between two frames, which Split leaves at the start of the next one.
func leadingCRLF(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// trimLine drops the line ends before a frame, and the line ends, spaces
// and tabs after it.
func trimLine(b []byte) []byte {
	b = b[leadingCRLF(b):]
	for len(b) > 0 {
		switch b[len(b)-1] {
		case '\r', '\n', ' ', '\t':
			b = b[:len(b)-1]
			continue
		}
		break
	}
	return b
}

// splitText finds a frame of a text protocol at the start of buf: after
// any CR and LF, a first byte that start accepts, up to and including the
// first byte that end accepts. Control bytes are garbage, and so is a frame
// not ended within max bytes. The frame it returns includes the line ends
// before it, which Decode skips.
func splitText(buf []byte, max int, start func(byte) bool, end func(byte) bool) (int, error) {
	i := leadingCRLF(buf)
	if i >= max {
		return 0, ErrGarbage
	}
	if i == len(buf) {
		return 0, nil
	}
	if !start(buf[i]) {
		return 0, ErrGarbage
	}
	for j := i; j < len(buf); j++ {
		c := buf[j]
		if j > i && end(c) {
			if j+1-i > max {
				return 0, ErrGarbage
			}
			return j + 1, nil
		}
		if textControl(c) {
			return 0, ErrGarbage
		}
	}
	if len(buf)-i >= max {
		return 0, ErrGarbage
	}
	return 0, nil
}

// takePosition appends a zero position to m, reusing what an earlier
// message left in m.Positions (its attributes' array), and returns it.
func takePosition(m *Message) *Position {
	n := len(m.Positions)
	if n < cap(m.Positions) {
		m.Positions = m.Positions[:n+1]
		attrs := m.Positions[n].Attrs[:0]
		m.Positions[n] = Position{Attrs: attrs}
	} else {
		m.Positions = append(m.Positions, Position{})
	}
	return &m.Positions[n]
}

// dropPosition removes the last position of m (one whose values turned
// out unusable).
func dropPosition(m *Message) {
	m.Positions = m.Positions[:len(m.Positions)-1]
}

// validCoordinates reports whether coordinates are finite and within
// range.
func validCoordinates(lat, lon float64) bool {
	return !math.IsNaN(lat) && !math.IsNaN(lon) && lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180
}

// usable reports whether a decoded position can be kept: coordinates in
// range, finite speed, heading and altitude, a time of years 0 to 9999 (what
// RFC 3339 can write). A decoder drops a position that is not, as Traccar
// refuses coordinates out of range.
func usable(p *Position) bool {
	y := p.Time.Year()
	return validCoordinates(p.Latitude, p.Longitude) && finite(p.Speed) && finite(p.Heading) &&
		finite(p.Altitude) && y >= 0 && y <= 9999
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// setAttr sets the attribute key of p, replacing an earlier value of the
// same key as Traccar's attribute map does; beyond textMaxAttrs new keys
// are dropped.
func setAttr(p *Position, a Attribute) {
	for i := range p.Attrs {
		if p.Attrs[i].Key == a.Key && p.Attrs[i].IO == a.IO {
			p.Attrs[i] = a
			return
		}
	}
	if len(p.Attrs) < textMaxAttrs {
		p.Attrs = attrAppend(p.Attrs, a)
	}
}

func setNum(p *Position, key string, v float64) {
	if finite(v) {
		setAttr(p, Attribute{Key: key, Kind: AttrNumber, Num: v})
	}
}

func setBool(p *Position, key string, v bool) {
	n := 0.0
	if v {
		n = 1
	}
	setAttr(p, Attribute{Key: key, Kind: AttrBool, Num: n})
}

// setStr sets a string attribute; an empty string sets nothing, as in
// Traccar, and neither does one the API would refuse (over 64 bytes,
// control characters).
func setStr(p *Position, key, v string) {
	if v == "" || !attrTextOK(v) {
		return
	}
	setAttr(p, Attribute{Key: key, Kind: AttrString, Str: v})
}

// identifierOK reports whether s can name a device (API.md §13: 1–32
// characters of [0-9A-Za-z._-]).
func identifierOK(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// javaInt parses s as Java's Integer.parseInt does (an optional sign and
// decimal digits within 32 bits).
func javaInt(s string) (int, bool) {
	return javaIntBase(s, 10, 32)
}

// javaIntBase parses s as Java's Integer.parseInt(s, base) (bits 32) or
// Long.parseLong(s, base) (bits 64) do.
func javaIntBase(s string, base, bits int) (int, bool) {
	v, err := strconv.ParseInt(s, base, bits)
	if err != nil {
		return 0, false
	}
	return int(v), true
}

// javaDouble parses s as Java's Double.parseDouble does for the decimal
// numbers the protocols send; it refuses what is not finite.
func javaDouble(s string) (float64, bool) {
	if s == "" || strings.ContainsAny(s, "_xXnNiI") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !finite(v) {
		return 0, false
	}
	return v, true
}

// javaSplit splits s at sep as Java's String.split does: trailing empty
// fields are dropped. It appends to dst.
func javaSplit(dst []string, s string, sep byte) []string {
	start := len(dst)
	for {
		i := strings.IndexByte(s, sep)
		if i < 0 {
			dst = append(dst, s)
			break
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
	for len(dst) > start && dst[len(dst)-1] == "" {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// patternBuilder builds a regular expression as Traccar's PatternBuilder
// does: number() reads d as a digit, x as a hex digit and . as a dot;
// text() is literal; expression() is a regular expression as it is.
type patternBuilder struct{ frags []string }

func newPattern() *patternBuilder { return &patternBuilder{} }

func (p *patternBuilder) text(s string) *patternBuilder {
	p.frags = append(p.frags, regexp.QuoteMeta(s))
	return p
}

func (p *patternBuilder) number(s string) *patternBuilder {
	s = strings.NewReplacer("dddd", "d{4}", "ddd", "d{3}", "dd", "d{2}").Replace(s)
	s = strings.NewReplacer("xxxx", "x{4}", "xxx", "x{3}", "xx", "x{2}").Replace(s)
	s = strings.NewReplacer("d", `\d`, "x", "[0-9a-fA-F]", ".", `\.`).Replace(s)
	p.frags = append(p.frags, s)
	return p
}

func (p *patternBuilder) expression(s string) *patternBuilder {
	p.frags = append(p.frags, s)
	return p
}

// optional makes the last count fragments optional.
func (p *patternBuilder) optional(count int) *patternBuilder {
	at := len(p.frags) - count
	p.frags = append(p.frags[:at], append([]string{"(?:"}, p.frags[at:]...)...)
	p.frags = append(p.frags, ")?")
	return p
}

func (p *patternBuilder) or() *patternBuilder         { return p.expression("|") }
func (p *patternBuilder) groupBegin() *patternBuilder { return p.expression("(?:") }
func (p *patternBuilder) groupEnd(s string) *patternBuilder {
	return p.expression(")" + s)
}
func (p *patternBuilder) any() *patternBuilder { return p.expression(".*") }

func (p *patternBuilder) String() string { return strings.Join(p.frags, "") }

// nonCapturing is the regular expression re with its groups made
// non-capturing: the same matches, fewer groups. A pattern of Go's regexp
// whose program stays within 500 instructions is matched by backtracking,
// several times faster than by the automaton that larger ones take.
func nonCapturing(re string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(re); i++ {
		c := re[i]
		b.WriteByte(c)
		switch {
		case c == '\\' && i+1 < len(re):
			i++
			b.WriteByte(re[i])
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '(' && !inClass && (i+1 == len(re) || re[i+1] != '?'):
			b.WriteString("?:")
		}
	}
	return b.String()
}

// whole compiles the pattern to match a whole sentence (Java's matches()).
func (p *patternBuilder) whole() *regexp.Regexp {
	return regexp.MustCompile(`(?s)\A(?:` + p.String() + `)\z`)
}

// anywhere compiles the pattern to find matches within a sentence (Java's
// find()).
func (p *patternBuilder) anywhere() *regexp.Regexp {
	return regexp.MustCompile(`(?s)` + p.String())
}

// groups reads the groups of a match in order, as Traccar's Parser does: a
// group that did not take part in the match, or matched nothing, is absent.
// A number that does not parse (a Java exception) sets bad, and the decoder
// then drops the message as Traccar does.
type groups struct {
	s   string
	idx []int
	pos int
	bad bool
}

// matchGroups matches s against re and returns its groups (ok false when it
// does not match).
func matchGroups(re *regexp.Regexp, s string) (groups, bool) {
	idx := re.FindStringSubmatchIndex(s)
	if idx == nil {
		return groups{}, false
	}
	return groups{s: s, idx: idx, pos: 1}, true
}

// group is group i, "" when absent.
func (f *groups) group(i int) string {
	if 2*i+1 >= len(f.idx) || f.idx[2*i] < 0 {
		return ""
	}
	return f.s[f.idx[2*i]:f.idx[2*i+1]]
}

// hasNext reports whether the next n groups are all present; when not, it
// skips them.
func (f *groups) hasNext(n int) bool {
	for i := f.pos; i < f.pos+n; i++ {
		if f.group(i) == "" {
			f.pos += n
			return false
		}
	}
	return true
}

// hasNextAny reports whether any of the next n groups is present; when
// none is, it skips them.
func (f *groups) hasNextAny(n int) bool {
	for i := f.pos; i < f.pos+n; i++ {
		if f.group(i) != "" {
			return true
		}
	}
	f.pos += n
	return false
}

func (f *groups) skip(n int) { f.pos += n }

func (f *groups) next() string {
	s := f.group(f.pos)
	f.pos++
	return s
}

// nextInt is the next group as an int, or def when absent.
func (f *groups) nextInt(def int) int {
	if !f.hasNext(1) {
		return def
	}
	v, ok := javaInt(f.next())
	if !ok {
		f.bad = true
	}
	return v
}

// nextIntOK is the next group as an int, ok false when absent (Java's
// nullable nextInt()).
func (f *groups) nextIntOK() (int, bool) {
	if !f.hasNext(1) {
		return 0, false
	}
	v, ok := javaInt(f.next())
	if !ok {
		f.bad = true
	}
	return v, ok
}

// nextHex is the next group as a hexadecimal number of bits bits, or def
// when absent.
func (f *groups) nextHex(bits int, def int) int {
	if !f.hasNext(1) {
		return def
	}
	v, ok := javaIntBase(f.next(), 16, bits)
	if !ok {
		f.bad = true
	}
	return v
}

// nextFloat is the next group as a float64, or def when absent.
func (f *groups) nextFloat(def float64) float64 {
	if !f.hasNext(1) {
		return def
	}
	v, ok := javaDouble(f.next())
	if !ok {
		f.bad = true
	}
	return v
}

// nextFloatOK is the next group as a float64, ok false when absent.
func (f *groups) nextFloatOK() (float64, bool) {
	if !f.hasNext(1) {
		return 0, false
	}
	v, ok := javaDouble(f.next())
	if !ok {
		f.bad = true
	}
	return v, ok
}

// nextCoordinate reads degrees and minutes then a hemisphere (Traccar's
// DEG_MIN_HEM).
func (f *groups) nextCoordinate() float64 {
	c := float64(f.nextInt(0))
	c += f.nextFloat(0) / 60
	return hemisphere(c, f.next())
}

// nextCoordinateMinMin reads degrees, whole minutes and the minutes'
// fraction then a hemisphere (DEG_MIN_MIN_HEM).
func (f *groups) nextCoordinateMinMin() float64 {
	c := float64(f.nextInt(0))
	whole, frac := f.next(), f.next()
	v, ok := javaDouble(whole + "." + frac)
	if !ok {
		f.bad = true
	}
	c += v / 60
	return hemisphere(c, f.next())
}

// nextCoordinateHem reads an optional hemisphere, degrees and minutes, then
// another optional hemisphere (HEM_DEG_MIN_HEM).
func (f *groups) nextCoordinateHem() float64 {
	hem := f.next()
	c := float64(f.nextInt(0))
	c += f.nextFloat(0) / 60
	if f.hasNext(1) {
		hem = f.next()
	}
	return hemisphere(c, hem)
}

// nextDateTime reads year, month, day, hour, minute and second (YMD_HMS)
// as civilTime does: ok is false, and the time zero, when they name no
// time that exists.
func (f *groups) nextDateTime() (time.Time, bool) {
	y, mo, d := f.nextInt(0), f.nextInt(0), f.nextInt(0)
	h, mi, s := f.nextInt(0), f.nextInt(0), f.nextInt(0)
	return civilTime(y, mo, d, h, mi, s)
}

func hemisphere(c float64, hem string) float64 {
	if hem == "S" || hem == "W" || hem == "-" {
		return -math.Abs(c)
	}
	return c
}

// parseCompactTime reads yyyyMMddHHmmss: ok is false when s is not 14
// digits. Digits that name no time that exists (a day past the month's
// end, hour 24) give the zero time, as civilTime does, never another day.
func parseCompactTime(s string) (t time.Time, ok bool) {
	if len(s) != 14 {
		return time.Time{}, false
	}
	var v [6]int
	widths := [6]int{4, 2, 2, 2, 2, 2}
	at := 0
	for i, w := range widths {
		n := 0
		for _, c := range []byte(s[at : at+w]) {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			n = n*10 + int(c-'0')
		}
		v[i] = n
		at += w
	}
	t, _ = civilTime(v[0], v[1], v[2], v[3], v[4], v[5])
	return t, true
}
