// Package password is fleet's own password hashing, from the standard
// library: PBKDF2-HMAC-SHA256 with OWASP's iteration count, in a string
// that names its parameters; and it bounds how many hashes run at once
// (Slots), so that a burst of sign-ins does not run them all together.
// A program may hash otherwise (fleet.Options.Passwords; fleetpass's
// Argon2id is fleetserver's).
//
// What makes a password acceptable, and who may try one how often, are
// package fleet's rules.
package password

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Iterations is OWASP's iteration count for PBKDF2-HMAC-SHA256 (Password
// Storage Cheat Sheet); the salt is 16 bytes, the hash 32.
const (
	Iterations = 600_000
	keyLen     = 32
)

// MaxIterations is the most a stored hash may ask of one verification
// (ten times OWASP's count): a hash naming more (only a hand-edited store
// could hold one) never matches, so that one sign-in's time stays bounded.
const MaxIterations = 10 * Iterations

// prefix starts every hash Hash makes:
// $pbkdf2-sha256$i=600000$<salt>$<hash>, salt and hash in unpadded
// standard base64.
const prefix = "$pbkdf2-sha256$"

var b64 = base64.RawStdEncoding

// Hash returns the PBKDF2-HMAC-SHA256 hash of password, with a random
// salt and Iterations, as $pbkdf2-sha256$i=N$SALT$HASH.
func Hash(password string) string {
	return hashWith(password, Iterations)
}

func hashWith(password string, iter int) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum, err := pbkdf2.Key(sha256.New, password, salt, iter, keyLen)
	if err != nil {
		panic("password: " + err.Error()) // only FIPS 140-3 mode refuses, and not these parameters
	}
	return fmt.Sprintf("%si=%d$%s$%s", prefix, iter, b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// Verify reports whether password matches a hash made by Hash (with the
// iterations the hash names, MaxIterations at most).
func Verify(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 5 || parts[0] != "" || "$"+parts[1]+"$" != prefix {
		return false
	}
	var iter int
	if n, err := fmt.Sscanf(parts[2], "i=%d", &iter); n != 1 || err != nil || parts[2] != fmt.Sprintf("i=%d", iter) || iter < 1 || iter > MaxIterations {
		return false
	}
	salt, err1 := b64.DecodeString(parts[3])
	want, err2 := b64.DecodeString(parts[4])
	if err1 != nil || err2 != nil || len(salt) == 0 || len(want) == 0 || len(want) > 64 {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

// IsArgon2id reports whether hash is in Argon2id's PHC form
// ($argon2id$...), which Verify does not read.
func IsArgon2id(hash string) bool { return strings.HasPrefix(hash, "$argon2id$") }

// Slots bounds how many password hashes run at once: beyond that, a hash
// waits for a slot, at most Wait and while its context lasts.
type Slots struct {
	sem     chan struct{}
	running atomic.Int64
	// Wait is how long Do waits for a slot.
	Wait time.Duration
	// Started, if set, is called as a hash starts with how many run at
	// once (tests count with it).
	Started func(running int)
}

// NewSlots returns n slots (at least 1) whose hashes wait for one at most
// wait.
func NewSlots(n int, wait time.Duration) *Slots {
	return &Slots{sem: make(chan struct{}, max(n, 1)), Wait: wait}
}

// Do runs fn in a slot. It returns false, without running fn, when no slot
// came free within Wait or before ctx ended.
func (h *Slots) Do(ctx context.Context, fn func()) bool {
	select {
	case h.sem <- struct{}{}:
	default:
		t := time.NewTimer(h.Wait)
		defer t.Stop()
		select {
		case h.sem <- struct{}{}:
		case <-ctx.Done():
			return false
		case <-t.C:
			return false
		}
	}
	defer func() { <-h.sem }()
	n := h.running.Add(1)
	defer h.running.Add(-1)
	if h.Started != nil {
		h.Started(int(n))
	}
	fn()
	return true
}
