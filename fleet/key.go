package fleet

import (
	"crypto/rand"
	"crypto/sha256"
	"hash/crc32"
	"strings"
	"time"
	"unicode/utf8"
)

// A key secret is "fleet_" + 32 random base62 characters + a 6-character
// base62 CRC-32 checksum of the random part. The fixed prefix lets secret
// scanners recognise leaked keys; the checksum lets the server refuse a
// mistyped key without a store lookup. Only the SHA-256 of the secret is kept.
const (
	SecretPrefix      = "fleet_"
	secretRandomLen   = 32
	secretChecksumLen = 6
	SecretLen         = len(SecretPrefix) + secretRandomLen + secretChecksumLen
	// KeyPrefixLen is how much of a secret is kept to recognise it by.
	KeyPrefixLen = 12
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewSecret returns a new random key secret.
func NewSecret() string {
	var b [SecretLen]byte
	copy(b[:], SecretPrefix)
	random := b[len(SecretPrefix) : len(SecretPrefix)+secretRandomLen]
	// Rejection sampling keeps every base62 character equally likely.
	var buf [64]byte
	for n := 0; n < secretRandomLen; {
		rand.Read(buf[:])
		for _, c := range buf {
			if c < 248 && n < secretRandomLen { // 248 = 4*62
				random[n] = base62[c%62]
				n++
			}
		}
	}
	putChecksum(b[len(b)-secretChecksumLen:], checksum(string(random)))
	return string(b[:])
}

func putChecksum(dst []byte, sum uint32) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = base62[sum%62]
		sum /= 62
	}
}

// CheckSecret reports whether s has the shape of a key secret and its
// checksum matches. It does not allocate.
func CheckSecret(s string) bool {
	if len(s) != SecretLen || s[:len(SecretPrefix)] != SecretPrefix {
		return false
	}
	random := s[len(SecretPrefix) : len(SecretPrefix)+secretRandomLen]
	for i := 0; i < len(s)-len(SecretPrefix); i++ {
		if !isBase62(s[len(SecretPrefix)+i]) {
			return false
		}
	}
	var want [secretChecksumLen]byte
	putChecksum(want[:], checksum(random))
	return string(want[:]) == s[len(s)-secretChecksumLen:]
}

// checksum is the CRC-32 (IEEE) of s, computed over the string itself so
// that checking a key does not allocate.
func checksum(s string) uint32 {
	crc := ^uint32(0)
	for i := 0; i < len(s); i++ {
		crc = crc32.IEEETable[byte(crc)^s[i]] ^ (crc >> 8)
	}
	return ^crc
}

func isBase62(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// HashSecret returns the SHA-256 of a secret, the only form in which a
// secret is stored. It does not allocate.
func HashSecret(s string) [32]byte {
	var buf [SecretLen]byte
	if len(s) == SecretLen {
		copy(buf[:], s)
		return sha256.Sum256(buf[:])
	}
	return sha256.Sum256([]byte(s))
}

// Permission names what a key may do: "RESOURCE:read" or "RESOURCE:write",
// or "*" for everything. A write permission implies the read one.
type Permission = string

// The permissions of the contract.
const (
	PermAll              Permission = "*"
	PermVehiclesRead     Permission = "vehicles:read"
	PermVehiclesWrite    Permission = "vehicles:write"
	PermLocationsRead    Permission = "locations:read"
	PermLocationsWrite   Permission = "locations:write"
	PermMaintenanceRead  Permission = "maintenance:read"
	PermMaintenanceWrite Permission = "maintenance:write"
	PermAlertsRead       Permission = "alerts:read"
	PermAlertsWrite      Permission = "alerts:write"
	PermWebhooksRead     Permission = "webhooks:read"
	PermWebhooksWrite    Permission = "webhooks:write"
	PermEventsRead       Permission = "events:read"
	PermKeysRead         Permission = "keys:read"
	PermKeysWrite        Permission = "keys:write"
	PermDevicesRead      Permission = "devices:read"
	PermDevicesWrite     Permission = "devices:write"
	// PermDevicesCommand sends commands to devices (API.md §16): a
	// permission of its own, which devices:write does not imply.
	PermDevicesCommand Permission = "devices:command"
	PermDriversRead    Permission = "drivers:read"
	PermDriversWrite   Permission = "drivers:write"
	// PermNotificationsRead and PermNotificationsWrite are the people's
	// notification rules and report schedules (API.md §17).
	PermNotificationsRead  Permission = "notifications:read"
	PermNotificationsWrite Permission = "notifications:write"
)

// AllPermissions lists every permission other than "*".
var allPermissions = []Permission{
	PermVehiclesRead, PermVehiclesWrite, PermLocationsRead, PermLocationsWrite,
	PermMaintenanceRead, PermMaintenanceWrite, PermAlertsRead, PermAlertsWrite,
	PermWebhooksRead, PermWebhooksWrite, PermEventsRead, PermKeysRead, PermKeysWrite,
	PermDevicesRead, PermDevicesWrite, PermDevicesCommand, PermDriversRead, PermDriversWrite, PermNotificationsRead, PermNotificationsWrite,
}

// AllPermissions returns every permission other than "*", in a fresh slice.
func AllPermissions() []Permission { return append([]Permission(nil), allPermissions...) }

// ValidPermission reports whether p is "*" or a known permission.
func ValidPermission(p string) bool {
	if p == PermAll {
		return true
	}
	for _, q := range allPermissions {
		if p == q {
			return true
		}
	}
	return false
}

// Permissions is the list a key holds.
type Permissions []Permission

// Allows reports whether the list grants p, taking "*" and write-implies-read
// into account. It does not allocate.
func (ps Permissions) Allows(p Permission) bool {
	resource, read := strings.CutSuffix(p, ":read")
	for _, h := range ps {
		if h == PermAll || h == p {
			return true
		}
		if read && len(h) == len(resource)+len(":write") && h[:len(resource)] == resource && h[len(resource):] == ":write" {
			return true
		}
	}
	return false
}

// Covers reports whether every permission in other is granted by ps; "*" in
// other is granted only by "*".
func (ps Permissions) Covers(other []Permission) bool {
	for _, p := range other {
		if !ps.Allows(p) {
			return false
		}
	}
	return true
}

// KeyStatus is derived from a key's revocation and expiry and the clock.
type KeyStatus string

const (
	KeyActive  KeyStatus = "active"
	KeyRevoked KeyStatus = "revoked"
	KeyExpired KeyStatus = "expired"
)

// KeyStatuses lists every key status.
func KeyStatuses() []KeyStatus { return []KeyStatus{KeyActive, KeyRevoked, KeyExpired} }

// Key is an API key. Its secret is never kept; Hash is its SHA-256.
type Key struct {
	ID          string
	AccountID   string
	Name        string
	Prefix      string // first KeyPrefixLen characters of the secret
	Hash        [32]byte
	Permissions Permissions
	Environment string
	CreatedAt   time.Time
	LastUsedAt  *time.Time
	ExpiresAt   *time.Time
	RevokedAt   *time.Time
	// Replaces is the id of the key this one replaced in a rotation
	// (RotateKey), "" for a key made otherwise. It never changes.
	Replaces string
}

// Status returns the key's status at time now.
func (k Key) Status(now time.Time) KeyStatus {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return KeyExpired
	}
	return KeyActive
}

// Limits on key fields.
const (
	MaxKeyName     = 100
	MaxEnvironment = 50
)

// KeyParams are what a caller chooses when creating a key.
type KeyParams struct {
	Name        string
	Permissions []Permission // nil: those of the creating key
	Environment string       // "": "production"
	ExpiresAt   *time.Time
}

// Validate checks the parameters at time now.
func (p KeyParams) Validate(now time.Time) error {
	var v Validator
	p.validate(&v, now)
	return v.Err()
}

func (p KeyParams) validate(v *Validator, now time.Time) {
	name := strings.TrimSpace(p.Name)
	v.Check(name != "" && utf8.RuneCountInString(p.Name) <= MaxKeyName, "name", "must be 1 to %d characters", MaxKeyName)
	v.Text("name", p.Name)
	if p.Permissions != nil {
		v.Check(len(p.Permissions) > 0, "permissions", "must name at least one permission")
		for i, perm := range p.Permissions {
			v.Check(ValidPermission(perm), "permissions["+itoa(i)+"]", "unknown permission %q", perm)
		}
	}
	v.Check(utf8.RuneCountInString(p.Environment) <= MaxEnvironment, "environment", "must be at most %d characters", MaxEnvironment)
	v.Text("environment", p.Environment)
	if p.ExpiresAt != nil {
		v.Check(p.ExpiresAt.After(now), "expires_at", "must be in the future")
	}
}
