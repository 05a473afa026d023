package fleetdevice

// queclink decodes the queclink protocol.
type queclink struct{}

// Queclink returns the queclink protocol's decoder.
func Queclink() Protocol { return queclink{} }

func (queclink) Name() string  { return "queclink" }
func (queclink) Port() int     { return 5004 }
func (queclink) UDP() bool     { return true }
func (queclink) MaxFrame() int { return 4096 }

// Split is not written yet: every byte is garbage.
func (queclink) Split(buf []byte) (int, error) { return 0, ErrGarbage }

// Decode is not written yet: every frame is garbage.
func (queclink) Decode(frame []byte, s *Session, m *Message) error { return ErrGarbage }
