package fleetwire

import "time"

// CommandInput is the body of POST /v1/devices/{device_id}/commands. The
// command object itself goes out as fleet.Command, whose JSON is the
// API's.
type CommandInput struct {
	Type    string  `json:"type"`
	Seconds *int    `json:"seconds"`
	Index   *int    `json:"index"`
	On      *bool   `json:"on"`
	Text    *string `json:"text"`
	Hex     *string `json:"hex"`
	Force   bool    `json:"force"`
	// ExpiresAt is when the command stops waiting for its device; null or
	// absent: 24 hours after it is posted.
	ExpiresAt *time.Time `json:"expires_at"`
}
