package teltonika

import "github.com/fleetkit/fleetapi/fleetdevice/devproto"

// Encoder encodes commands as codec 12 frames over TCP, as Traccar's
// TeltonikaProtocolEncoder does: `00000000`, the length of codec..N2, codec
// 0x0C, a command count of 1, type 0x05, the command's length (4 bytes), the
// command, the count again and a CRC-16/IBM of codec..N2 in 4 bytes. The
// device answers with a codec 12 frame of type 0x06 whose text the Decoder
// returns as the Message's CommandResult (Teltonika does not echo a
// sequence number: the answer is the oldest command's).
//
//	engine_stop       setdigout 1
//	engine_resume     setdigout 0
//	position_request  getgps
//	output            setdigout with the output's state at its place and ?
//	                  (unchanged) before it: index 2 on is "setdigout ?1"
//	reboot            cpureset
//	custom            the text, or the bytes of hex, as the command
//
// Engine stop drives DOUT1, where the immobiliser's relay is wired. The
// zero value is ready.
type Encoder struct{}

// MaxCommand bounds a custom command's text or bytes.
const MaxCommand = 512

// tkMaxOutput is the highest digital output setdigout addresses (DOUT1 to
// DOUT4, by model).
const tkMaxOutput = 4

// Commands lists the command types teltonika carries.
func (Encoder) Commands() []string {
	return []string{devproto.CmdEngineStop, devproto.CmdEngineResume, devproto.CmdPositionRequest,
		devproto.CmdOutput, devproto.CmdReboot, devproto.CmdCustom}
}

// Encode appends c's codec 12 frame to dst. Datagrams cannot carry it: a
// UDP session's command is ErrCommandUnsupported.
func (Encoder) Encode(dst []byte, c devproto.Command, s *devproto.Session) ([]byte, error) {
	if s != nil && s.Transport != devproto.TCP {
		return dst, devproto.ErrCommandUnsupported
	}
	switch c.Type {
	case devproto.CmdEngineStop:
		return tkCommand(dst, "setdigout 1", nil), nil
	case devproto.CmdEngineResume:
		return tkCommand(dst, "setdigout 0", nil), nil
	case devproto.CmdPositionRequest:
		return tkCommand(dst, "getgps", nil), nil
	case devproto.CmdReboot:
		return tkCommand(dst, "cpureset", nil), nil
	case devproto.CmdOutput:
		if c.Index < 1 || c.Index > tkMaxOutput {
			return dst, &devproto.CommandError{Field: "index", Message: "must be 1 to 4 (DOUT1 to DOUT4)"}
		}
		var text [10 + tkMaxOutput]byte
		n := copy(text[:], "setdigout ")
		for i := 1; i < c.Index; i++ {
			text[n] = '?'
			n++
		}
		text[n] = '0'
		if c.On {
			text[n] = '1'
		}
		return tkCommand(dst, "", text[:n+1]), nil
	case devproto.CmdCustom:
		if err := devproto.CheckText(c, MaxCommand, "", true); err != nil {
			return dst, err
		}
		if len(c.Hex) > 0 {
			return tkCommand(dst, "", c.Hex), nil
		}
		return tkCommand(dst, c.Text, nil), nil
	}
	return dst, devproto.ErrCommandUnsupported
}

// tkCommand appends the codec 12 frame of the command text (or, when text
// is empty, of b).
func tkCommand(dst []byte, text string, b []byte) []byte {
	n := len(text) + len(b)
	dst = append(dst, 0, 0, 0, 0)
	dst = be32(dst, uint32(n+8))
	start := len(dst)
	dst = append(dst, tkCodec12, 1, tkTypeCommand)
	dst = be32(dst, uint32(n))
	dst = append(dst, text...)
	dst = append(dst, b...)
	dst = append(dst, 1)
	return be32(dst, uint32(devproto.CRC16ARC(dst[start:])))
}

func be32(dst []byte, v uint32) []byte {
	return append(dst, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// Codec 12's types: a command, and a device's answer to one.
const (
	tkTypeCommand  = 0x05
	tkTypeResponse = 0x06
)

// tkCodec12Answer decodes a codec 12 body (codec, N1, type, size, content,
// N2): a response (type 0x06) is the answer to a command.
func tkCodec12Answer(body []byte, m *devproto.Message) {
	if len(body) < 8 || body[2] != tkTypeResponse || body[1] != 1 {
		return
	}
	size := devproto.BE32(body[3:])
	if uint64(size)+8 != uint64(len(body)) {
		return
	}
	m.CommandResult = devproto.PrintableResult(body[7 : 7+size])
	m.HasResult = true
}
