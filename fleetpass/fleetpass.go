// Package fleetpass hashes the passwords of the people who sign in to
// Fleet with Argon2id, for fleet.Options.Passwords:
//
//	svc := fleet.NewService(store, fleet.Options{Passwords: fleetpass.Argon2id()})
//
// The reference server (fleetserver) stores every password this way.
// Its hashes are in the PHC string form, with OWASP's parameters
// (Password Storage Cheat Sheet): 19 MiB of memory, 2 passes, 1 thread;
// 16-byte salt, 32-byte hash:
//
//	$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>
//
// It is a package of its own, apart from fleet, so that a program that
// only speaks the API's types (fleetclient's callers) does not link
// golang.org/x/crypto. fleet's own default, without this package, is
// PBKDF2-HMAC-SHA256 from the standard library, which refuses Argon2id
// hashes: a store whose people signed up through fleetserver needs
// Argon2id here to keep signing them in.
package fleetpass

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// OWASP's argon2id parameters: 19 MiB of memory, 2 passes, 1 thread;
// 16-byte salt, 32-byte hash.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
)

// The most a stored hash may ask of one verification: the memory it takes
// is what bounds the server's under a burst of sign-ins (a hash slot each,
// see fleet.Options.MaxPasswordHashes), so a hash naming more (only a
// hand-edited store could hold one) never matches.
const (
	maxArgonMemory  = 64 * 1024 // KiB
	maxArgonTime    = 10
	maxArgonThreads = 4
)

var b64 = base64.RawStdEncoding

// Hasher hashes and verifies passwords with Argon2id. It satisfies
// fleet.PasswordHasher; its zero value is ready to use.
type Hasher struct{}

// Argon2id returns the Argon2id hasher.
func Argon2id() Hasher { return Hasher{} }

// Hash returns the Argon2id hash of password in PHC string form.
func (Hasher) Hash(password string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// Verify reports whether password matches a hash made by Hash (with
// whatever parameters the hash names, within 64 MiB of memory, 10 passes
// and 4 threads: a hash naming more never matches).
func (Hasher) Verify(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > maxArgonMemory || t == 0 || t > maxArgonTime || p == 0 || p > maxArgonThreads {
		return false
	}
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 || len(want) > 128 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
