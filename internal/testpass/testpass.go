// Package testpass is a cheap password hasher for tests
// (fleet.Options.Passwords): fleet's default form, PBKDF2-HMAC-SHA256, at
// one iteration instead of 600,000, so that tests that create and sign in
// many people stay fast. fleet's default verifies its hashes (it follows
// the iterations a hash names). Never use it outside tests.
package testpass

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/fleetkit/fleetapi/fleet"
)

// Hasher is the cheap hasher; its zero value is ready to use.
type Hasher struct{}

// Cheap returns the cheap hasher.
func Cheap() fleet.PasswordHasher { return Hasher{} }

// Hash returns a one-iteration hash of plain, salted, in fleet's default
// form.
func (Hasher) Hash(plain string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	return HashWithSalt(plain, salt)
}

// HashWithSalt is Hash with a given salt: the same hash each time.
func HashWithSalt(plain string, salt []byte) string {
	sum, err := pbkdf2.Key(sha256.New, plain, salt, 1, 32)
	if err != nil {
		panic(err)
	}
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$pbkdf2-sha256$i=1$%s$%s", b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// Verify is fleet.VerifyPassword.
func (Hasher) Verify(hash, plain string) bool { return fleet.VerifyPassword(hash, plain) }
