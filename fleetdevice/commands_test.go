package fleetdevice

import (
	"bufio"
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/fleetkit/fleetapi/fleetdevice/devicetest"
)

// TestCommandTypesTable: each protocol's encoder is in the table, and
// CommandTypes hands its types on as plain data.
func TestCommandTypesTable(t *testing.T) {
	is := is.New(t)
	types := CommandTypes()
	is.Equal(len(types), len(Protocols())) // every protocol carries commands
	for _, p := range Protocols() {
		e, ok := EncoderNamed(p.Name)
		is.True(ok)
		is.Equal(types[p.Name], e.Commands())
		is.True(len(types[p.Name]) > 0)
	}
	types["teltonika"][0] = "changed" // the caller's own copy
	is.Equal(CommandTypes()["teltonika"][0], "engine_stop")
	_, ok := EncoderNamed("traccar")
	is.True(!ok)
}

// simulatedID is the identifier of the simulated devices.
const simulatedID = "356307042441013"

// simulated is, for each protocol with an encoder, a simulated device
// that answers commands, a custom command's text it reads, whether its
// answer echoes the command's Seq, and the types whose answers are no
// acknowledgement (the device answers by their effect: a report).
func simulated(now time.Time) map[string]struct {
	dev     devicetest.Commanded
	custom  string
	echoes  bool
	unacked []string
} {
	type sim = struct {
		dev     devicetest.Commanded
		custom  string
		echoes  bool
		unacked []string
	}
	return map[string]sim{
		"teltonika": {&devicetest.Teltonika{IMEI: simulatedID}, "getver", false, nil},
		"gt06":      {&devicetest.GT06{IMEI: simulatedID}, "STATUS#", true, nil},
		"h02":       {&devicetest.H02{ID: simulatedID}, "*HQ," + simulatedID + ",R1,120000#", false, nil},
		"queclink": {&devicetest.Queclink{IMEI: simulatedID, Name: "GL300", Now: func() time.Time { return now }},
			"AT+GTRTO=gl300,8,,,,,,FFFF$", true, nil},
		"gps103": {&devicetest.GPS103{IMEI: simulatedID}, "H,080", false,
			[]string{"position_request", "set_interval", "custom"}},
	}
}

// TestSimulatorsAnswerCommands: every command type of every protocol,
// encoded by the protocol's encoder, is read by the simulated device as a
// command, and its answer (when the device sends one) decodes as the
// command's result.
func TestSimulatorsAnswerCommands(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	sims := simulated(now)
	for _, p := range Protocols() {
		if p.Name == OsmAndName {
			continue // the body of an HTTP answer, which nothing acknowledges
		}
		sim, ok := sims[p.Name]
		dev := sim.dev
		if !ok {
			t.Errorf("%s: no simulated device answers its commands", p.Name)
			continue
		}
		for i, typ := range p.Encoder.Commands() {
			t.Run(p.Name+"/"+typ, func(t *testing.T) {
				is := is.New(t)
				c := Command{Type: typ, Seconds: 60, Index: 1, On: true, Text: sim.custom, Seq: uint32(7 + i)}
				s := Session{Transport: TCP, Identifier: simulatedID, Now: now}
				b, err := p.Encoder.Encode(nil, c, &s)
				is.NoErr(err)
				got, err := devicetest.Read(bufio.NewReader(bytes.NewReader(b)), dev.Command)
				is.NoErr(err)
				is.Equal(got, b) // the device reads one command, all of it
				answer, err := dev.Answer(b)
				is.NoErr(err)
				if answer == nil {
					return // the device answers none
				}
				n, err := p.Decoder.Split(answer)
				is.NoErr(err)
				is.Equal(n, len(answer))
				var m Message
				is.NoErr(p.Decoder.Decode(answer, &s, &m))
				if slices.Contains(sim.unacked, typ) {
					is.True(!m.HasResult)
					return
				}
				is.True(m.Kind == KindOther || m.Kind == KindPositions) // some answers carry a position
				is.True(m.HasResult)
				is.True(m.CommandResult != "")
				if typ == "custom" && p.Name == "queclink" {
					is.Equal(m.ResultSeq, uint32(0xFFFF)) // the custom text's own serial
				} else if sim.echoes {
					is.Equal(m.ResultSeq, c.Seq) // echoed: the command's own
				} else {
					is.Equal(m.ResultSeq, uint32(0))
				}
			})
		}
	}
}

// CommandSupports hands on each protocol's types and custom text bound;
// CheckCommand judges a command as the protocol's encoder does.
func TestCheckCommand(t *testing.T) {
	is := is.New(t)
	cs := CommandSupports()
	is.Equal(cs["gt06"].MaxText, 245)
	is.Equal(cs["osmand"].Types, []string{"custom"})
	custom := map[string]string{"h02": "*HQ,1,R1#", "queclink": "AT+GTRTO=gl300,1,,,,,,FFFF$"}
	for name, c := range cs {
		is.True(c.MaxText > 0 && c.MaxText <= 1024)
		text := custom[name]
		if text == "" {
			text = "status"
		}
		for _, typ := range c.Types {
			is.NoErr(CheckCommand(name, Command{Type: typ, Seconds: 60, Index: 1, Text: text}))
		}
	}
	is.Equal(CheckCommand("gt06", Command{Type: "reboot"}), ErrCommandUnsupported)
	is.Equal(CheckCommand("traccar", Command{Type: "custom", Text: "x"}), ErrCommandUnsupported)
	var ce *CommandError
	is.True(errors.As(CheckCommand("gps103", Command{Type: "set_interval", Seconds: 90}), &ce))
	is.Equal(ce.Field, "seconds")
	is.True(errors.As(CheckCommand("h02", Command{Type: "custom", Text: "S20,1,1"}), &ce))
	is.Equal(ce.Field, "text")
	is.True(errors.As(CheckCommand("teltonika", Command{Type: "custom", Text: "caf\u00e9"}), &ce))
	is.Equal(ce.Field, "text")
}
