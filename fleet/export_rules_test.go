package fleet

import "time"

// WithinHours reports whether at falls inside the working hours h, as an
// ignition_on rule judges it.
func WithinHours(h WorkingHours, at time.Time) (bool, error) {
	c, err := h.compile()
	if err != nil {
		return false, err
	}
	return c.within(at), nil
}
