package sqlstore

import "github.com/fleetkit/fleetapi/fleet"

// memberWrites are the write-sets one member of a group staged.
type memberWrites struct {
	sets []fleet.IngestWrites
}

func (m *memberWrites) add(w fleet.IngestWrites) { m.sets = append(m.sets, w) }
