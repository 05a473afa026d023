package fleet

// Hooks on the gates for the tests of package fleet_test (gate.go).

// SetGateQueued makes s call f as a request starts waiting for a gate,
// with the gate's key (an account's or a vehicle's id) and whether it
// waits to hold it alone.
func SetGateQueued(s *Service, f func(key string, alone bool)) { s.gates.Queued = f }

// Gates returns how many gates s keeps.
func Gates(s *Service) int {
	return s.gates.Len()
}
