package fleet

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// A share link shows one vehicle to someone outside the account — a
// customer waiting for a delivery — for a while, and nothing else: a public
// page at ShareLinkPath(token) under the dashboard's address, with the
// company's and the vehicle's names, when the link expires, the vehicle's
// live position and its route since the later of the link's creation and
// the start of the viewer's day. The token is ShareTokenBytes random bytes,
// base64url without padding; only its SHA-256 is stored, so it is shown
// once, when the link is made. A link ends when it expires (at most
// MaxShareLinkTTL after it is made) or is revoked, and its vehicle's
// deletion deletes it: from then on its page answers as an unknown token's
// does, and its open streams end (see CheckShareStreams).
const (
	ShareTokenBytes = 32
	// ShareTokenLen is the length of a token as the URL carries it.
	ShareTokenLen = 43
	// MaxShareLinkTTL is how far ahead a link's expires_at may be.
	MaxShareLinkTTL = 7 * 24 * time.Hour
	// MaxActiveShareLinks is how many active links one vehicle may have.
	MaxActiveShareLinks = 50
	// MaxShareStreams is how many live streams one link may have open on
	// one server at once.
	MaxShareStreams = 20
	// ShareLinkRetention is how long a link is kept after it expired, for
	// the list (a revoked link is kept as long as it would have been).
	ShareLinkRetention = 30 * 24 * time.Hour
	// MaxShareRoutePoints bounds the route a page draws: beyond it, the
	// route's latest part.
	MaxShareRoutePoints = 10_000
)

// ShareLinkPath is the path of a share link's public page, under the
// dashboard's address.
func ShareLinkPath(token string) string { return "/s/" + token }

// ShareLinkURL is the address of a share link's public page on the
// dashboard at base ("https://fleet.example.com", no trailing slash).
func ShareLinkURL(base, token string) string { return base + ShareLinkPath(token) }

// ShareLinkStatus is where a share link stands at a time.
type ShareLinkStatus string

const (
	ShareLinkActive  ShareLinkStatus = "active"
	ShareLinkRevoked ShareLinkStatus = "revoked"
	ShareLinkExpired ShareLinkStatus = "expired"
)

// ShareLinkStatuses lists every status of a share link.
func ShareLinkStatuses() []ShareLinkStatus {
	return []ShareLinkStatus{ShareLinkActive, ShareLinkRevoked, ShareLinkExpired}
}

// Valid reports whether st is a known status.
func (st ShareLinkStatus) Valid() bool {
	return st == ShareLinkActive || st == ShareLinkRevoked || st == ShareLinkExpired
}

// ShareLink is a link that shows one vehicle on a public page. Its token is
// never kept; Hash is its SHA-256.
type ShareLink struct {
	ID        string
	AccountID string
	VehicleID string
	Hash      [32]byte
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt *time.Time
}

// Status returns the link's status at now: revoked once revoked, else
// expired from ExpiresAt on, else active.
func (l ShareLink) Status(now time.Time) ShareLinkStatus {
	switch {
	case l.RevokedAt != nil:
		return ShareLinkRevoked
	case !now.Before(l.ExpiresAt):
		return ShareLinkExpired
	}
	return ShareLinkActive
}

// Clone returns a copy of l that shares no memory with it.
func (l ShareLink) Clone() ShareLink {
	if l.RevokedAt != nil {
		t := *l.RevokedAt
		l.RevokedAt = &t
	}
	return l
}

// NewShareLink is a link as its creator receives it: the only time its
// token is shown.
type NewShareLink struct {
	Link  ShareLink
	Token string
}

// ShareLinkInput is what a new share link is made of.
type ShareLinkInput struct {
	VehicleID string
	// ExpiresAt is required: after now, and at most MaxShareLinkTTL after.
	ExpiresAt *time.Time
}

// ShareLinkFilter selects share links; zero fields select all.
type ShareLinkFilter struct {
	VehicleID string
	// Status selects the links with that status at Now.
	Status ShareLinkStatus
	Now    time.Time
}

// Match reports whether l passes the filter; stores use it so that the rule
// is written once.
func (f ShareLinkFilter) Match(l *ShareLink) bool {
	return (f.VehicleID == "" || l.VehicleID == f.VehicleID) && (f.Status == "" || l.Status(f.Now) == f.Status)
}

// check refuses filter values that name no vehicle or status, as the query
// parameters that carry them, before they reach a store.
func (f ShareLinkFilter) check() error {
	if f.VehicleID != "" && !ValidID(PrefixVehicle, f.VehicleID) {
		return Errorf(CodeInvalidRequest, "vehicle_id is not a vehicle id.")
	}
	if f.Status != "" && !f.Status.Valid() {
		return Errorf(CodeInvalidRequest, "status must be one of active, revoked, expired.")
	}
	return nil
}

// newShareToken returns a new token: ShareTokenBytes random bytes,
// base64url without padding.
func newShareToken() string {
	var b [ShareTokenBytes]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HashShareToken returns the SHA-256 of a token, as stores keep it.
func HashShareToken(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// checkShareToken reports whether s has the shape of a token: its canonical
// base64url form of ShareTokenBytes bytes.
func checkShareToken(s string) bool {
	if len(s) != ShareTokenLen {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return err == nil && len(b) == ShareTokenBytes
}

// errNoShareLink is the one answer to a token that shows nothing — unknown,
// malformed, expired, revoked, or its vehicle gone — so that tokens cannot
// be probed: a new value each time, so that no caller changes another's.
func errNoShareLink() *Error {
	return &Error{Code: CodeNotFound, Message: "This link does not exist, or it has expired or been revoked."}
}

// validate checks a new link's input at now.
func (in ShareLinkInput) validate(now time.Time) error {
	var v Validator
	v.Check(in.VehicleID != "", "vehicle_id", "is required")
	v.Text("vehicle_id", in.VehicleID)
	switch {
	case in.ExpiresAt == nil:
		v.Add("expires_at", "is required: when the link stops working, at most 7 days ahead")
	case !Timestamp(*in.ExpiresAt).After(now):
		v.Add("expires_at", "must be in the future")
	case Timestamp(*in.ExpiresAt).After(now.Add(MaxShareLinkTTL)):
		v.Add("expires_at", "must be at most 7 days ahead (by %s)", now.Add(MaxShareLinkTTL).Format(time.RFC3339))
	}
	return v.Err()
}
