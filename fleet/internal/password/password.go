// Package password hashes passwords with argon2id, in the PHC string form
// a store keeps, verifies a password against such a hash, and bounds how
// many hashes run at once (Slots): each takes 19 MiB of memory, so a burst
// of sign-ins must not run them all together.
//
// What makes a password acceptable, and who may try one how often, are
// package fleet's rules.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/argon2"
)

// OWASP's argon2id parameters (Password Storage Cheat Sheet): 19 MiB of
// memory, 2 passes, 1 thread; 16-byte salt, 32-byte hash.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
)

var b64 = base64.RawStdEncoding

// Hash returns the argon2id hash of password in PHC string form.
func Hash(password string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	sum := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// The most a stored hash may ask of one verification: the memory it takes
// is what bounds the server's under a burst of sign-ins (a hash slot each,
// see Slots), so a hash naming more (only a hand-edited store could hold
// one) never matches.
const (
	maxArgonMemory  = 64 * 1024 // KiB
	maxArgonTime    = 10
	maxArgonThreads = 4
)

// Verify reports whether password matches a hash made by Hash (with
// whatever parameters the hash names, within 64 MiB of memory, 10 passes
// and 4 threads).
func Verify(hash, password string) bool {
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
