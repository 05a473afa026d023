package fleet

import (
	"encoding/base32"
	"strings"

	"github.com/google/uuid"
)

// ID prefixes, one per resource kind.
const (
	PrefixAccount   = "acc"
	PrefixKey       = "key"
	PrefixVehicle   = "veh"
	PrefixWorkOrder = "wo"
	PrefixSchedule  = "sch"
	PrefixAlert     = "alt"
	PrefixRule      = "rule"
	PrefixGeofence  = "geo"
	PrefixWebhook   = "wh"
	PrefixEvent     = "evt"
	PrefixDelivery  = "del"
	PrefixTrip      = "trip"
	PrefixDevice    = "dev"
	PrefixDriver    = "drv"
	PrefixShareLink = "shr"
	PrefixCommand   = "cmd"
)

// idEncoding is lower-case Crockford base32: its alphabet is in ASCII order,
// so encoded IDs sort like the UUIDv7 bytes they encode, that is by time.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

const idBodyLen = 26 // 16 bytes in base32

// NewID returns a new time-ordered, URL-safe id "PREFIX_<26 chars>". IDs made
// later in a process sort after earlier ones (UUIDv7 is monotonic).
func NewID(prefix string) string {
	u := uuid.Must(uuid.NewV7())
	var buf [idBodyLen]byte
	idEncoding.Encode(buf[:], u[:])
	return prefix + "_" + string(buf[:])
}

// IDPattern is a regular expression (RE2 and ECMA 262 alike) that the ids
// of a prefix match.
func IDPattern(prefix string) string {
	return "^" + prefix + "_[0-9a-hjkmnp-tv-z]{" + itoa(idBodyLen) + "}$"
}

// ValidID reports whether s has the shape of an id with the given prefix.
func ValidID(prefix, s string) bool {
	body, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(body) != idBodyLen {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') || c == 'i' || c == 'l' || c == 'o' || c == 'u' {
			return false
		}
	}
	return true
}
