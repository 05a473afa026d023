package fleet

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet/internal/password"
)

// Role is what a person may do in the dashboard of their account.
type Role string

const (
	// RoleAdmin may do everything in the account: keys, users, settings.
	RoleAdmin Role = "admin"
	// RoleManager runs the fleet: everything an admin does but people,
	// API keys and webhooks, which a manager sees and cannot change.
	RoleManager Role = "manager"
	// RoleViewer sees everything and changes nothing.
	RoleViewer Role = "viewer"
)

// Roles lists every role, from the one that may do the most.
func Roles() []Role { return []Role{RoleAdmin, RoleManager, RoleViewer} }

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleManager || r == RoleViewer }

// managerWithholds are the permissions a manager lacks: changing API keys
// and webhooks (people are an admin's alone: see UserSession.requireAdmin).
var managerWithholds = []Permission{PermKeysWrite, PermWebhooksWrite}

// Permissions returns what the role may do, in the terms of the permission
// table (PermissionOf): an admin holds "*", a manager every permission but
// managerWithholds, a viewer every read permission. The dashboard acts
// with these, so a viewer is refused every change, and a manager every
// change of keys and webhooks, by the same rules that refuse an API key
// without the permission.
func (r Role) Permissions() Permissions {
	if r == RoleAdmin {
		return Permissions{PermAll}
	}
	var ps Permissions
	for _, p := range allPermissions {
		switch {
		case strings.HasSuffix(p, ":read"):
			ps = append(ps, p)
		case r == RoleManager && !slices.Contains(managerWithholds, p):
			ps = append(ps, p)
		}
	}
	return ps
}

// PrefixUser is the id prefix of users.
const PrefixUser = "usr"

// User is a person who signs in to the dashboard of one account.
type User struct {
	ID        string
	AccountID string
	Email     string // lower case; unique across accounts
	Name      string
	Role      Role
	// PasswordHash is the hash Options.Passwords made (a string that
	// names its algorithm: $argon2id$... with fleetpass.Argon2id, as
	// fleetserver stores them, $pbkdf2-sha256$... by default); "" until
	// the user sets a password (with a sign-in link).
	PasswordHash string
	CreatedAt    time.Time
	LastLoginAt  *time.Time
}

// Session is a signed-in browser. Its secret is never kept; Hash is its
// SHA-256.
type Session struct {
	Hash       [32]byte
	UserID     string
	AccountID  string
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// SignInLink lets a person sign in once without a password, within
// SignInLinkTTL, and set one. Its secret is never kept; Hash is its SHA-256.
type SignInLink struct {
	Hash      [32]byte
	UserID    string
	AccountID string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Session and sign-in link lifetimes.
const (
	// SessionIdle ends a session not used for this long.
	SessionIdle = 12 * time.Hour
	// SessionMaxAge ends a session this long after sign-in, used or not.
	SessionMaxAge = 7 * 24 * time.Hour
	// sessionTouchEvery is how stale a session's LastSeenAt may be before
	// a request writes it again: one write a minute per browser at most.
	sessionTouchEvery = time.Minute
	// SignInLinkTTL is how long a one-time sign-in link is valid.
	SignInLinkTTL = 24 * time.Hour
)

// Expired reports whether the session has ended at now, idle or too old.
func (s Session) Expired(now time.Time) bool {
	return !now.Before(s.LastSeenAt.Add(SessionIdle)) || !now.Before(s.CreatedAt.Add(SessionMaxAge))
}

// Password rules.
const (
	MinPasswordLen = 12
	MaxPasswordLen = 256
	MaxUserName    = 100
	MaxEmail       = 254
)

//go:embed common_passwords.txt
var commonPasswordsText string

var commonPasswords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(commonPasswordsText))
	for sc.Scan() {
		if w := strings.TrimSpace(sc.Text()); w != "" && !strings.HasPrefix(w, "#") {
			m[strings.ToLower(w)] = true
		}
	}
	return m
})

// CheckPassword returns a validation_error naming field unless password is
// 12 to 256 characters long and not in the embedded list of common
// passwords (compared without regard to case).
func CheckPassword(field, password string) error {
	var v Validator
	checkPassword(&v, field, password)
	return v.Err()
}

func checkPassword(v *Validator, field, password string) {
	n := utf8.RuneCountInString(password)
	switch {
	case n < MinPasswordLen:
		v.Add(field, "must be at least %d characters", MinPasswordLen)
	case n > MaxPasswordLen:
		v.Add(field, "must be at most %d characters", MaxPasswordLen)
	case commonPasswords()[strings.ToLower(password)]:
		v.Add(field, "is too common: choose another")
	}
}

// NormaliseEmail returns the address in the form users are stored and
// looked up by: trimmed and lower case.
func NormaliseEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// UserParams are what an admin (or the operator) chooses when adding a user.
type UserParams struct {
	Email string
	Name  string
	Role  Role // "": viewer
}

func (p *UserParams) validate(v *Validator) {
	p.Email = NormaliseEmail(p.Email)
	p.Name = strings.TrimSpace(p.Name)
	if p.Role == "" {
		p.Role = RoleViewer
	}
	addr, err := mail.ParseAddress(p.Email)
	v.Check(err == nil && addr.Address == p.Email && len(p.Email) <= MaxEmail, "email", "must be an e-mail address")
	v.Check(utf8.RuneCountInString(p.Name) <= MaxUserName, "name", "must be at most %d characters", MaxUserName)
	v.Text("name", p.Name)
	v.Check(p.Role.Valid(), "role", "must be admin, manager or viewer")
}

// PasswordHasher hashes the passwords of the people who sign in to the
// dashboard, and checks a password against a stored hash
// (Options.Passwords). Hash returns a string that names its own algorithm
// and parameters, as stores keep it in User.PasswordHash; Verify reports
// whether plain matches hash, false for a hash it cannot read. Both run
// in the service's hash slots (Options.MaxPasswordHashes) and are safe for
// concurrent use.
type PasswordHasher interface {
	Hash(plain string) string
	Verify(hash, plain string) bool
}

// HashPassword returns the hash of a password by fleet's default hasher,
// the one a Service uses when Options.Passwords is nil:
// PBKDF2-HMAC-SHA256 with OWASP's iteration count (Password Storage Cheat
// Sheet: 600,000), a 16-byte salt and a 32-byte hash, as
// $pbkdf2-sha256$i=600000$SALT$HASH (unpadded base64).
func HashPassword(plain string) string { return password.Hash(plain) }

// VerifyPassword reports whether a password matches a hash made by
// HashPassword (with the iterations the hash names, within ten times
// OWASP's count: a hash naming more never matches). It does not read
// Argon2id hashes (those of fleetserver, fleetpass.Argon2id): it answers
// false for them.
func VerifyPassword(hash, plain string) bool { return password.Verify(hash, plain) }

// defaultPasswords is the PasswordHasher of a Service whose
// Options.Passwords is nil: HashPassword and VerifyPassword, telling the
// log why an Argon2id hash is refused.
type defaultPasswords struct{ log *slog.Logger }

func (defaultPasswords) Hash(plain string) string { return password.Hash(plain) }

func (p defaultPasswords) Verify(hash, plain string) bool {
	if password.IsArgon2id(hash) {
		p.log.Error("password refused: the stored hash is Argon2id, which this service does not read",
			"reason", "this hash needs fleetpass.Argon2id: pass it in Options.Passwords")
		return false
	}
	return password.Verify(hash, plain)
}

// newToken returns a random 256-bit secret, URL-safe, and its SHA-256.
func newToken() (string, [32]byte) {
	var b [32]byte
	rand.Read(b[:])
	s := base64.RawURLEncoding.EncodeToString(b[:])
	return s, HashToken(s)
}

// HashToken returns the SHA-256 of a session or sign-in link secret, the
// only form in which one is stored.
func HashToken(s string) [32]byte { return sha256.Sum256([]byte(s)) }
