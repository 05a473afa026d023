package fleetdevice

// gt06 decodes the gt06 protocol.
type gt06 struct{}

// GT06 returns the gt06 protocol's decoder.
func GT06() Protocol { return gt06{} }

func (gt06) Name() string  { return "gt06" }
func (gt06) Port() int     { return 5023 }
func (gt06) UDP() bool     { return false }
func (gt06) MaxFrame() int { return 2048 }

// Split is not written yet: every byte is garbage.
func (gt06) Split(buf []byte) (int, error) { return 0, ErrGarbage }

// Decode is not written yet: every frame is garbage.
func (gt06) Decode(frame []byte, s *Session, m *Message) error { return ErrGarbage }
