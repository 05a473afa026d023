package osmand

import "github.com/fleetkit/fleetapi/fleetdevice/devproto"

// Encoder encodes a custom command as the text body of the answer to the
// device's next request (the OsmAnd handler's 200): the apps and the DIY
// senders that read it act on it; the protocol has no acknowledgement,
// so the command stays sent. Custom is the only type: the apps have no
// command set of their own (Traccar has no OsmAnd encoder). The zero
// value is ready.
type Encoder struct{}

// MaxCommand bounds a custom command's text.
const MaxCommand = 1024

// Commands lists the command types osmand carries.
func (Encoder) Commands() []string { return []string{devproto.CmdCustom} }

// Encode appends c's text to dst: the answer's body.
func (Encoder) Encode(dst []byte, c devproto.Command, _ *devproto.Session) ([]byte, error) {
	if c.Type != devproto.CmdCustom {
		return dst, devproto.ErrCommandUnsupported
	}
	if err := devproto.CheckText(c, MaxCommand, "", false); err != nil {
		return dst, err
	}
	return append(dst, c.Text...), nil
}
