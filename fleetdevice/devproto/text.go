package devproto

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
// field: Pattern spells them the way Traccar's PatternBuilder does, and
// Groups reads the groups of a match the way Traccar's Parser does, so
// that a message decodes to the same values. Go's regexp matches in linear
// time and picks, among the matches, the one a backtracking engine would
// (leftmost-first), so the groups are those Traccar reads.

// KnotsToKmh converts knots to km/h (API.md §13).
const KnotsToKmh = 1.852

// MaxAttrs bounds the attributes a text decoder gives one position.
const MaxAttrs = 64

// textControl reports whether b is a control byte that no text frame may
// hold (API.md §13: all but CR, LF and TAB).
func textControl(b byte) bool {
	return (b < 0x20 && b != '\r' && b != '\n' && b != '\t') || b == 0x7f
}

// HasTextControl reports whether b holds a control byte of textControl.
func HasTextControl(b []byte) bool {
	for _, c := range b {
		if textControl(c) {
			return true
		}
	}
	return false
}

// LeadingCRLF is the number of CR and LF bytes b starts with: the line
// ends between two frames, which Split leaves at the start of the next one.
func LeadingCRLF(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// TrimLine drops the line ends before a frame, and the line ends, spaces
// and tabs after it.
func TrimLine(b []byte) []byte {
	b = b[LeadingCRLF(b):]
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

// SplitText finds a frame of a text protocol at the start of buf: after
// any CR and LF, a first byte that start accepts, up to and including the
// first byte that end accepts. Control bytes are garbage, and so is a frame
// not ended within max bytes. The frame it returns includes the line ends
// before it, which Decode skips.
func SplitText(buf []byte, max int, start func(byte) bool, end func(byte) bool) (int, error) {
	i := LeadingCRLF(buf)
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

// Usable reports whether a decoded position can be kept: coordinates in
// range, finite speed, heading and altitude, a time of years 0 to 9999 (what
// RFC 3339 can write). A decoder drops a position that is not, as Traccar
// refuses coordinates out of range.
func Usable(p *Position) bool {
	y := p.Time.Year()
	return OnEarth(p.Latitude, p.Longitude) && Finite(p.Speed) && Finite(p.Heading) &&
		Finite(p.Altitude) && y >= 0 && y <= 9999
}

// SetAttr sets the attribute key of p, replacing an earlier value of the
// same key as Traccar's attribute map does; beyond MaxAttrs new keys
// are dropped.
func SetAttr(p *Position, a Attribute) {
	for i := range p.Attrs {
		if p.Attrs[i].Key == a.Key && p.Attrs[i].IO == a.IO {
			p.Attrs[i] = a
			return
		}
	}
	if len(p.Attrs) < MaxAttrs {
		p.Attrs = AppendAttr(p.Attrs, a)
	}
}

func SetNum(p *Position, key string, v float64) {
	if Finite(v) {
		SetAttr(p, Attribute{Key: key, Kind: AttrNumber, Num: v})
	}
}

func SetBool(p *Position, key string, v bool) {
	n := 0.0
	if v {
		n = 1
	}
	SetAttr(p, Attribute{Key: key, Kind: AttrBool, Num: n})
}

// SetStr sets a string attribute; an empty string sets nothing, as in
// Traccar, and neither does one the API would refuse (over 64 bytes,
// control characters).
func SetStr(p *Position, key, v string) {
	if v == "" || !AttrTextOK(v) {
		return
	}
	SetAttr(p, Attribute{Key: key, Kind: AttrString, Str: v})
}

// IdentifierOK reports whether s can name a device (API.md §13: 1–32
// characters of [0-9A-Za-z._-]).
func IdentifierOK(s string) bool {
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

// AllDigits reports whether s is one or more decimal digits.
func AllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// JavaInt parses s as Java's Integer.parseInt does (an optional sign and
// decimal digits within 32 bits).
func JavaInt(s string) (int, bool) {
	return JavaIntBase(s, 10, 32)
}

// JavaIntBase parses s as Java's Integer.parseInt(s, base) (bits 32) or
// Long.parseLong(s, base) (bits 64) do.
func JavaIntBase(s string, base, bits int) (int, bool) {
	v, err := strconv.ParseInt(s, base, bits)
	if err != nil {
		return 0, false
	}
	return int(v), true
}

// JavaDouble parses s as Java's Double.parseDouble does for the decimal
// numbers the protocols send; it refuses what is not finite.
func JavaDouble(s string) (float64, bool) {
	if s == "" || strings.ContainsAny(s, "_xXnNiI") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !Finite(v) {
		return 0, false
	}
	return v, true
}

// JavaSplit splits s at sep as Java's String.split does: trailing empty
// fields are dropped. It appends to dst.
func JavaSplit(dst []string, s string, sep byte) []string {
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

// Pattern builds a regular expression as Traccar's PatternBuilder
// does: number() reads d as a digit, x as a hex digit and . as a dot;
// text() is literal; expression() is a regular expression as it is.
type Pattern struct{ frags []string }

func NewPattern() *Pattern { return &Pattern{} }

func (p *Pattern) Text(s string) *Pattern {
	p.frags = append(p.frags, regexp.QuoteMeta(s))
	return p
}

func (p *Pattern) Number(s string) *Pattern {
	s = strings.NewReplacer("dddd", "d{4}", "ddd", "d{3}", "dd", "d{2}").Replace(s)
	s = strings.NewReplacer("xxxx", "x{4}", "xxx", "x{3}", "xx", "x{2}").Replace(s)
	s = strings.NewReplacer("d", `\d`, "x", "[0-9a-fA-F]", ".", `\.`).Replace(s)
	p.frags = append(p.frags, s)
	return p
}

func (p *Pattern) Expression(s string) *Pattern {
	p.frags = append(p.frags, s)
	return p
}

// Optional makes the last count fragments optional.
func (p *Pattern) Optional(count int) *Pattern {
	at := len(p.frags) - count
	p.frags = append(p.frags[:at], append([]string{"(?:"}, p.frags[at:]...)...)
	p.frags = append(p.frags, ")?")
	return p
}

func (p *Pattern) Or() *Pattern         { return p.Expression("|") }
func (p *Pattern) GroupBegin() *Pattern { return p.Expression("(?:") }
func (p *Pattern) GroupEnd(s string) *Pattern {
	return p.Expression(")" + s)
}
func (p *Pattern) Any() *Pattern { return p.Expression(".*") }

func (p *Pattern) String() string { return strings.Join(p.frags, "") }

// NonCapturing is the regular expression re with its groups made
// non-capturing: the same matches, fewer groups. A pattern of Go's regexp
// whose program stays within 500 instructions is matched by backtracking,
// several times faster than by the automaton that larger ones take.
func NonCapturing(re string) string {
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

// Whole compiles the pattern to match a whole sentence (Java's matches()).
func (p *Pattern) Whole() *regexp.Regexp {
	return regexp.MustCompile(`(?s)\A(?:` + p.String() + `)\z`)
}

// Anywhere compiles the pattern to find matches within a sentence (Java's
// find()).
func (p *Pattern) Anywhere() *regexp.Regexp {
	return regexp.MustCompile(`(?s)` + p.String())
}

// Groups reads the groups of a match in order, as Traccar's Parser does: a
// group that did not take part in the match, or matched nothing, is absent.
// A number that does not parse (a Java exception) sets Bad, and the decoder
// then drops the message as Traccar does.
type Groups struct {
	s   string
	idx []int
	pos int
	// Bad: a group read as a number did not parse.
	Bad bool
}

// MatchGroups matches s against re and returns its groups (ok false when it
// does not match).
func MatchGroups(re *regexp.Regexp, s string) (Groups, bool) {
	idx := re.FindStringSubmatchIndex(s)
	if idx == nil {
		return Groups{}, false
	}
	return NewGroups(s, idx), true
}

// NewGroups reads the groups of a match of s whose submatch indexes are
// idx (as regexp's FindStringSubmatchIndex gives them).
func NewGroups(s string, idx []int) Groups {
	return Groups{s: s, idx: idx, pos: 1}
}

// Seek makes group i the next one read.
func (f *Groups) Seek(i int) { f.pos = i }

// Group is group i, "" when absent.
func (f *Groups) Group(i int) string {
	if 2*i+1 >= len(f.idx) || f.idx[2*i] < 0 {
		return ""
	}
	return f.s[f.idx[2*i]:f.idx[2*i+1]]
}

// HasNext reports whether the next n groups are all present; when not, it
// skips them.
func (f *Groups) HasNext(n int) bool {
	for i := f.pos; i < f.pos+n; i++ {
		if f.Group(i) == "" {
			f.pos += n
			return false
		}
	}
	return true
}

// HasNextAny reports whether any of the next n groups is present; when
// none is, it skips them.
func (f *Groups) HasNextAny(n int) bool {
	for i := f.pos; i < f.pos+n; i++ {
		if f.Group(i) != "" {
			return true
		}
	}
	f.pos += n
	return false
}

func (f *Groups) Skip(n int) { f.pos += n }

func (f *Groups) Next() string {
	s := f.Group(f.pos)
	f.pos++
	return s
}

// NextInt is the next group as an int, or def when absent.
func (f *Groups) NextInt(def int) int {
	if !f.HasNext(1) {
		return def
	}
	v, ok := JavaInt(f.Next())
	if !ok {
		f.Bad = true
	}
	return v
}

// NextIntOK is the next group as an int, ok false when absent (Java's
// nullable NextInt()).
func (f *Groups) NextIntOK() (int, bool) {
	if !f.HasNext(1) {
		return 0, false
	}
	v, ok := JavaInt(f.Next())
	if !ok {
		f.Bad = true
	}
	return v, ok
}

// NextHex is the next group as a hexadecimal number of bits bits, or def
// when absent.
func (f *Groups) NextHex(bits int, def int) int {
	if !f.HasNext(1) {
		return def
	}
	v, ok := JavaIntBase(f.Next(), 16, bits)
	if !ok {
		f.Bad = true
	}
	return v
}

// NextFloat is the next group as a float64, or def when absent.
func (f *Groups) NextFloat(def float64) float64 {
	if !f.HasNext(1) {
		return def
	}
	v, ok := JavaDouble(f.Next())
	if !ok {
		f.Bad = true
	}
	return v
}

// NextFloatOK is the next group as a float64, ok false when absent.
func (f *Groups) NextFloatOK() (float64, bool) {
	if !f.HasNext(1) {
		return 0, false
	}
	v, ok := JavaDouble(f.Next())
	if !ok {
		f.Bad = true
	}
	return v, ok
}

// NextCoordinate reads degrees and minutes then a hemisphere (Traccar's
// DEG_MIN_HEM).
func (f *Groups) NextCoordinate() float64 {
	c := float64(f.NextInt(0))
	c += f.NextFloat(0) / 60
	return hemisphere(c, f.Next())
}

// NextCoordinateMinMin reads degrees, whole minutes and the minutes'
// fraction then a hemisphere (DEG_MIN_MIN_HEM).
func (f *Groups) NextCoordinateMinMin() float64 {
	c := float64(f.NextInt(0))
	whole, frac := f.Next(), f.Next()
	v, ok := JavaDouble(whole + "." + frac)
	if !ok {
		f.Bad = true
	}
	c += v / 60
	return hemisphere(c, f.Next())
}

// NextCoordinateHem reads an optional hemisphere, degrees and minutes, then
// another optional hemisphere (HEM_DEG_MIN_HEM).
func (f *Groups) NextCoordinateHem() float64 {
	hem := f.Next()
	c := float64(f.NextInt(0))
	c += f.NextFloat(0) / 60
	if f.HasNext(1) {
		hem = f.Next()
	}
	return hemisphere(c, hem)
}

// NextDateTime reads year, month, day, hour, minute and second (YMD_HMS)
// as CivilTime does: ok is false, and the time zero, when they name no
// time that exists.
func (f *Groups) NextDateTime() (time.Time, bool) {
	y, mo, d := f.NextInt(0), f.NextInt(0), f.NextInt(0)
	h, mi, s := f.NextInt(0), f.NextInt(0), f.NextInt(0)
	return CivilTime(y, mo, d, h, mi, s)
}

func hemisphere(c float64, hem string) float64 {
	if hem == "S" || hem == "W" || hem == "-" {
		return -math.Abs(c)
	}
	return c
}

// ParseCompactTime reads yyyyMMddHHmmss: ok is false when s is not 14
// digits. Digits that name no time that exists (a day past the month's
// end, hour 24) give the zero time, as CivilTime does, never another day.
func ParseCompactTime(s string) (t time.Time, ok bool) {
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
	t, _ = CivilTime(v[0], v[1], v[2], v[3], v[4], v[5])
	return t, true
}
