package fleetdevice

// teltonika decodes the teltonika protocol.
type teltonika struct{}

// Teltonika returns the teltonika protocol's decoder.
func Teltonika() Protocol { return teltonika{} }

func (teltonika) Name() string  { return "teltonika" }
func (teltonika) Port() int     { return 5027 }
func (teltonika) UDP() bool     { return true }
func (teltonika) MaxFrame() int { return 65536 }

// Split is not written yet: every byte is garbage.
func (teltonika) Split(buf []byte) (int, error) { return 0, ErrGarbage }

// Decode is not written yet: every frame is garbage.
func (teltonika) Decode(frame []byte, s *Session, m *Message) error { return ErrGarbage }
