package fleetdevice

// gps103 decodes the gps103 protocol.
type gps103 struct{}

// GPS103 returns the gps103 protocol's decoder.
func GPS103() Protocol { return gps103{} }

func (gps103) Name() string  { return "gps103" }
func (gps103) Port() int     { return 5001 }
func (gps103) UDP() bool     { return false }
func (gps103) MaxFrame() int { return 2048 }

// Split is not written yet: every byte is garbage.
func (gps103) Split(buf []byte) (int, error) { return 0, ErrGarbage }

// Decode is not written yet: every frame is garbage.
func (gps103) Decode(frame []byte, s *Session, m *Message) error { return ErrGarbage }
