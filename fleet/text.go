package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Text a client sends never holds a control character: U+0000 to U+001F
// (C0) or U+007F (DEL). PostgreSQL refuses U+0000 in text outright (a store
// error, where SQLite would keep it), and the others corrupt logs, CSV
// exports and terminals that show the text later. Text that may span lines
// (descriptions, messages) may hold tab, line feed and carriage return.
//
// The rule lives here, on the Validator every Validate uses, so the service
// refuses such text whoever calls it. Fields whose values come from a
// closed set or a fixed form (ids, enums, dates, VIN, currency, URLs, event
// types, permissions) refuse control characters by their own check.

// controlChar returns the first control character of s, if any; multiline
// allows tab, line feed and carriage return. UTF-8 sequences of other
// characters never hold a byte below 0x80, so bytes can be read one by one.
func controlChar(s string, multiline bool) (byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != 0x7f {
			continue
		}
		if multiline && (c == '\t' || c == '\n' || c == '\r') {
			continue
		}
		return c, true
	}
	return 0, false
}

// Text records field as bad when s, single-line text, holds a control
// character.
func (v *Validator) Text(field, s string) {
	if c, bad := controlChar(s, false); bad {
		v.Add(field, "must not contain control characters (found U+%04X)", c)
	}
}

// MultilineText records field as bad when s, text that may span lines,
// holds a control character other than tab, line feed and carriage return.
func (v *Validator) MultilineText(field, s string) {
	if c, bad := controlChar(s, true); bad {
		v.Add(field, "must not contain control characters other than tab, line feed and carriage return (found U+%04X)", c)
	}
}

// JSONText records the strings of a JSON value (a free-form object, as a
// custom alert's data) that hold control characters, each by its path
// below field ("data.notes[2]"): member values are multi-line text, member
// names single-line (a bad name is recorded at its object). Every string
// is read, duplicate members included, as the JSON is kept as it came.
// Malformed JSON records nothing: it is the caller's to refuse.
func (v *Validator) JSONText(field string, raw []byte) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	jsonText(v, dec, field, true)
}

// jsonText walks one JSON value, checking its strings when check is set;
// it returns false once the JSON cannot be read further.
func jsonText(v *Validator, dec *json.Decoder, path string, check bool) bool {
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	switch t := tok.(type) {
	case string:
		if check {
			v.MultilineText(path, t)
		}
	case json.Delim:
		switch t {
		case '{':
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return false
				}
				name, _ := tok.(string)
				ok := true
				if c, bad := controlChar(name, false); bad && check {
					v.Add(path, "must not have a member name with control characters (found U+%04X)", c)
					ok = false
				}
				if !jsonText(v, dec, path+"."+name, check && ok) {
					return false
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if !jsonText(v, dec, path+"["+strconv.Itoa(i)+"]", check) {
					return false
				}
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return false
		}
	}
	return true
}

// CheckQueryText returns invalid_request naming param when one of its
// values holds a control character: filters reach the store, and no query
// parameter has a use for one.
func CheckQueryText(param string, values ...string) error {
	for _, s := range values {
		if c, bad := controlChar(s, false); bad {
			msg := fmt.Sprintf("must not contain control characters (found U+%04X)", c)
			e := Errorf(CodeInvalidRequest, "Query parameter %q %s.", param, msg)
			e.Details = []FieldError{{Field: param, Message: msg}}
			return e
		}
	}
	return nil
}
