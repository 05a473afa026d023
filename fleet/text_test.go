package fleet_test

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestValidatorText(t *testing.T) {
	is := is.New(t)
	for c := 0; c < 0x80; c++ {
		s := "a" + string(rune(c)) + "b"
		control := c < 0x20 || c == 0x7f
		var single, multi fleet.Validator
		single.Text("f", s)
		multi.MultilineText("f", s)
		is.Equal(single.Len() == 1, control)                                       // every C0 control and DEL
		is.Equal(multi.Len() == 1, control && c != '\t' && c != '\n' && c != '\r') // but tab and line breaks
	}
	var v fleet.Validator
	v.Text("name", "Zürich — 北京 🚚") // other characters are text
	v.MultilineText("notes", "Line 1\r\nLine 2\tend")
	is.Equal(v.Len(), 0)
	v.Text("name", "a\x00b")
	is.Equal(v.Err().(*fleet.Error).Details[0].Message, "must not contain control characters (found U+0000)")
}

func TestValidatorJSONText(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		json string
		want []string
	}{
		{`{"a":"ok","b":["x","y\ny"],"c":{"d":1,"e":null,"f":true}}`, nil},
		{`{"a":"x\u0000"}`, []string{"data.a"}},
		{`{"a":{"b":[1,{"c":"\u001b[31m"}]}}`, []string{"data.a.b[1].c"}},
		{`{"a":"ok","a":"\u007f"}`, []string{"data.a"}},                          // duplicates are read too
		{`{"k\u0000":"\u0000","n\tm":{"x":"\u0000"}}`, []string{"data", "data"}}, // names at their object; their values are not read further
		{`{"a":"\u0000`, []string{}},                                             // malformed: the caller's to refuse
	} {
		var v fleet.Validator
		v.JSONText("data", []byte(c.json))
		got := fields(v.Err())
		if len(c.want) == 0 {
			is.Equal(len(got), 0) // c.json
			continue
		}
		is.Equal(got, c.want) // c.json
	}
}

func TestCheckQueryText(t *testing.T) {
	is := is.New(t)
	is.NoErr(fleet.CheckQueryText("q", "truck", "Zürich", ""))
	err := fleet.CheckQueryText("tag", "ok", "a\x01")
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
	is.Equal(err.(*fleet.Error).Details[0].Field, "tag")
}
