package fleet

import (
	"context"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleet/internal/secret"
)

// SealKey encrypts the responses a key's requests made with an
// Idempotency-Key store for replay: every stored response body, whatever
// the route, is sealed with AES-256-GCM under it, bound to the key id, the
// Idempotency-Key and the status. It is derived from the requesting key's
// secret (SealKeyFor), which the server never stores — only its SHA-256 —
// so a reader of the store cannot open a stored response, and a secret
// returned by a create or rotation does not rest there in plain text; a
// replay made with the same secret opens it.
type SealKey [32]byte

// sealLabel is what SealKeyFor authenticates with the secret: a fixed
// label that makes the key good for this use only.
const sealLabel = "fleet idempotency response seal v1"

// SealKeyFor derives the SealKey of an API key secret: HMAC-SHA256 keyed
// with the secret over a fixed label.
func SealKeyFor(keySecret string) SealKey { return SealKey(secret.Derive(keySecret, sealLabel)) }

// sealData is the additional data a sealed body is bound to, so that a
// body cannot be moved to another record or status.
func sealData(keyID, idemKey string, status int) []byte {
	return []byte(keyID + "\x00" + idemKey + "\x00" + strconv.Itoa(status))
}

// seal encrypts a response body: version, nonce, then ciphertext and tag.
func (k SealKey) seal(keyID, idemKey string, status int, body []byte) []byte {
	return secret.SealBytes(k, sealData(keyID, idemKey, status), body)
}

var errUnsealable = errors.New("fleet: a stored idempotent response does not open with the requesting key")

// open decrypts what seal made. A plain JSON body, stored before responses
// were sealed (records last 24 hours), is returned as it is.
func (k SealKey) open(keyID, idemKey string, status int, stored []byte) ([]byte, error) {
	if len(stored) > 0 && stored[0] == '{' {
		return stored, nil
	}
	body, ok := secret.OpenBytes(k, sealData(keyID, idemKey, status), stored)
	if !ok {
		return nil, errUnsealable
	}
	return body, nil
}

// ValidIdempotencyKey reports whether k is 1 to 255 printable characters.
func ValidIdempotencyKey(k string) bool {
	if k == "" || len(k) > 255 || !utf8.ValidString(k) {
		return false
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// BeginIdempotent starts a request made with an Idempotency-Key. It returns
// (nil, nil) when the request should run (then FinishIdempotent or
// AbandonIdempotent must follow), the first response's record when it is a
// repeat of a finished request, its body opened with seal, and conflict
// when the key was used with another request or the first request is still
// running. seal is SealKeyFor the requesting key's secret.
func (e Edge) BeginIdempotent(ctx context.Context, p Principal, seal SealKey, idemKey string, requestHash [32]byte) (*IdempotencyRecord, error) {
	s := e.s
	if !ValidIdempotencyKey(idemKey) {
		return nil, Errorf(CodeInvalidRequest, "The Idempotency-Key header must be 1 to 255 printable characters.")
	}
	rec := IdempotencyRecord{KeyID: p.Key.ID, Key: idemKey, RequestHash: requestHash, CreatedAt: s.Now()}
	prev, found, err := s.store.BeginIdempotency(ctx, rec)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	if prev.RequestHash != requestHash {
		return nil, Errorf(CodeConflict, "This Idempotency-Key was already used with a different request.")
	}
	if !prev.Done {
		return nil, Errorf(CodeConflict, "A request with this Idempotency-Key is still in progress.")
	}
	if prev.Body, err = seal.open(prev.KeyID, prev.Key, prev.Status, prev.Body); err != nil {
		return nil, err
	}
	return &prev, nil
}

// FinishIdempotent records the response of a request begun with
// BeginIdempotent, for repeats to replay: the body is stored sealed with
// seal (see SealKey), never in plain text.
func (e Edge) FinishIdempotent(ctx context.Context, p Principal, seal SealKey, idemKey string, status int, body []byte) error {
	s := e.s
	return s.store.FinishIdempotency(ctx, p.Key.ID, idemKey, status, seal.seal(p.Key.ID, idemKey, status, body))
}

// AbandonIdempotent forgets a begun request that failed in a way a retry may
// repeat (a server error), so that the retry runs.
func (e Edge) AbandonIdempotent(ctx context.Context, p Principal, idemKey string) error {
	s := e.s
	return s.store.DeleteIdempotency(ctx, p.Key.ID, idemKey)
}
