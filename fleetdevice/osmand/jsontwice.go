package osmand

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// jsonMembersOnce checks that no object of doc, a valid JSON text, has a
// member name twice, or more than maxParams members (which bounds
// the comparisons). Names are compared once unescaped and without regard
// to case, as encoding/json matches them to a struct's fields (so that
// "device_id", "DEVICE_ID" and "device\u005fid" are one name). It reads
// doc once, and allocates only for names with escapes or outside ASCII,
// or objects nested deeper than a few levels.
func jsonMembersOnce(doc []byte) error {
	var nameBuf [32][]byte
	names := nameBuf[:0] // of the objects open, outermost first
	var openBuf [16]int
	open := openBuf[:0] // where each open object's names start in names; -1: an array
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '{':
			open = append(open, len(names))
		case '[':
			open = append(open, -1)
		case '}', ']':
			if n := len(open); n > 0 {
				if first := open[n-1]; first >= 0 {
					names = names[:first]
				}
				open = open[:n-1]
			}
		case '"':
			start := i + 1
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
			name := doc[start:min(i, len(doc))]
			j := i + 1
			for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '\n' || doc[j] == '\r') {
				j++
			}
			if j == len(doc) || doc[j] != ':' || len(open) == 0 || open[len(open)-1] < 0 {
				continue // a value, not a member's name
			}
			if bytes.IndexByte(name, '\\') >= 0 || !asciiOnly(name) {
				name = jsonFold(name)
			}
			first := open[len(open)-1]
			for _, seen := range names[first:] {
				if asciiFoldEqual(seen, name) {
					return osmAndError("member %q given twice", string(name))
				}
			}
			if len(names)-first == maxParams {
				return osmAndError("an object of more than %d members", maxParams)
			}
			names = append(names, name)
		}
	}
	return nil
}

func asciiOnly(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// jsonFold is a name as written (escapes and all) unescaped and folded as
// encoding/json folds names: each letter upper-cased after being
// lower-cased.
func jsonFold(raw []byte) []byte {
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s); err != nil {
		return raw
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		out = utf8.AppendRune(out, unicode.ToUpper(unicode.ToLower(r)))
	}
	return out
}

// asciiFoldEqual reports whether a and b are equal, ASCII letters compared
// without regard to case (jsonFold has folded any other).
func asciiFoldEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
