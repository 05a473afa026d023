package fleetdevice

// h02 decodes the h02 protocol.
type h02 struct{}

// H02 returns the h02 protocol's decoder.
func H02() Protocol { return h02{} }

func (h02) Name() string  { return "h02" }
func (h02) Port() int     { return 5013 }
func (h02) UDP() bool     { return true }
func (h02) MaxFrame() int { return 2048 }

// Split is not written yet: every byte is garbage.
func (h02) Split(buf []byte) (int, error) { return 0, ErrGarbage }

// Decode is not written yet: every frame is garbage.
func (h02) Decode(frame []byte, s *Session, m *Message) error { return ErrGarbage }
