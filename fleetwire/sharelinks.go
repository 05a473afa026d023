package fleetwire

import "time"

// ShareLink is the share link object of the API: a link that shows one
// vehicle on a public page, for a while. Never its token, which only the
// url of NewShareLink carries, once.
type ShareLink struct {
	ShareLinkID string     `json:"share_link_id"`
	VehicleID   string     `json:"vehicle_id"`
	Status      string     `json:"status"`
	ExpiresAt   time.Time  `json:"expires_at"`
	CreatedAt   time.Time  `json:"created_at"`
	RevokedAt   *time.Time `json:"revoked_at"`
}

// NewShareLink is a share link as created: the only time its URL, which
// carries the token, shows.
type NewShareLink struct {
	ShareLink
	URL string `json:"url"`
}

// ShareLinkInput is the body of POST /v1/share_links.
type ShareLinkInput struct {
	VehicleID string     `json:"vehicle_id"`
	ExpiresAt *time.Time `json:"expires_at"`
}
