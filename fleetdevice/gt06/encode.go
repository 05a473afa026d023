package gt06

import "github.com/fleetkit/fleetapi/fleetdevice/devproto"

// Encoder encodes commands as the 0x80 online command of Traccar's
// Gt06ProtocolEncoder: `78 78`, the length, 0x80, the command's length
// (4 + its text), a server flag (4 bytes), the text in ASCII, a serial
// number (2 bytes), a CRC-16/X-25 of length..serial, `0D 0A`. The server
// flag is the command's Seq and the serial its low 16 bits; the device
// echoes the flag in its answer, a 0x15 frame (or 0x21 on newer models)
// whose text the Decoder returns as the result, with ResultSeq the flag.
//
//	engine_stop    DYD,<password>#   (oil and power cut: the relay)
//	engine_resume  HFYD,<password>#
//	custom         the text, as the device's SMS command set has it
//	               ("WHERE#", "STATUS#", "Relay,1#"...)
//
// The password is the Command's, by default 000000 (the devices'
// factory one). The zero value is ready.
type Encoder struct{}

// MaxCommand bounds a custom command's text: what the frame's one-byte
// length leaves.
const MaxCommand = 245

// gtDefaultPassword is the factory password of the engine commands.
const gtDefaultPassword = "000000"

// Commands lists the command types gt06 carries.
func (Encoder) Commands() []string {
	return []string{devproto.CmdEngineStop, devproto.CmdEngineResume, devproto.CmdCustom}
}

// Encode appends c's 0x80 frame to dst.
func (Encoder) Encode(dst []byte, c devproto.Command, _ *devproto.Session) ([]byte, error) {
	switch c.Type {
	case devproto.CmdEngineStop, devproto.CmdEngineResume:
		pw, err := devproto.CheckPassword(c, gtDefaultPassword)
		if err != nil {
			return dst, err
		}
		verb := "DYD,"
		if c.Type == devproto.CmdEngineResume {
			verb = "HFYD,"
		}
		return gtCommand(dst, c.Seq, verb, pw, "#"), nil
	case devproto.CmdCustom:
		if err := devproto.CheckText(c, MaxCommand, "", false); err != nil {
			return dst, err
		}
		return gtCommand(dst, c.Seq, c.Text, "", ""), nil
	}
	return dst, devproto.ErrCommandUnsupported
}

// gtCommand appends the 0x80 frame of the text a+b+z with the server flag
// seq.
func gtCommand(dst []byte, seq uint32, a, b, z string) []byte {
	n := len(a) + len(b) + len(z)
	start := len(dst)
	dst = append(dst, 0x78, 0x78, byte(1+1+4+n+2+2), gtCommand0, byte(4+n),
		byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq))
	dst = append(dst, a...)
	dst = append(dst, b...)
	dst = append(dst, z...)
	dst = append(dst, byte(seq>>8), byte(seq))
	crc := devproto.CRC16X25(dst[start+2:])
	return append(dst, byte(crc>>8), byte(crc), '\r', '\n')
}

// stringAnswer decodes type 0x15, the answer to a 0x80 command: the
// command's length, the server flag it echoes, its text (NUL-padded on
// some devices), and on some a language. Some devices leave the length
// 0: the text is then what comes before the language (where Traccar
// reads none). An ICCID report (<ICCID:...>) is not an answer.
func (f *gtFrame) stringAnswer() {
	r, m := &f.r, f.m
	n := int(r.U8())
	if n == 0 && r.Left() >= 6 {
		n = r.Left() - 2
	}
	if n < 4 {
		return
	}
	flag := r.U32()
	text := r.Take(n - 4)
	if r.Bad || len(text) >= 7 && string(text[:7]) == "<ICCID:" {
		return
	}
	m.CommandResult = devproto.PrintableResult(text)
	m.HasResult, m.ResultSeq = true, flag
}
