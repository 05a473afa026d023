package fleet

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SecretKeys are the server's keys for the secrets it must keep in a form
// it can use again: the signing secrets of webhook endpoints. The service
// seals each before a store sees it (AES-256-GCM, bound to the endpoint's
// id), so a copy of the database alone — a backup, a dump, a stolen disk —
// reveals none of them; the keys are kept apart from it (fleetserver: a key
// file). Give them to a Service as WebhookOptions.SecretKeys.
//
// Decision: where the sealing lives. The rule — what is sealed, with which
// key, bound to what — is the service's, not a store's: the service seals
// before the store sees the secret, so every store (memstore, sqlstore, one
// of a user's own) gets it without knowing of it, and stores keep
// persisting what they are given.
//
// Decision: how the keys rotate. Several keys, the newest first, and the
// id of its key in each sealed value: a value sealed under any of the keys
// opens; new values are sealed under the first; and the service's start
// (Operator.SealWebhookSecrets) seals again under the first whatever an
// older key or no key sealed. So a rotation is an edit of the key file and
// a restart — no tool to run, no moment when a server cannot read what
// another wrote if the new key reaches every server before it seals with
// it — and an old key is dropped once nothing is sealed under it. (A
// command that re-encrypts the database offline would need every server
// stopped, and leaves nothing readable if it stops half way.)
type SecretKeys struct {
	keys []sealingKey // the first seals; each opens what it sealed
}

type sealingKey struct {
	id   string // keyID of the key
	aead cipher.AEAD
}

// SecretKeyLen is the length of a secret key: 256 bits.
const SecretKeyLen = 32

// keyID names a key in the values it seals: 8 hex digits of a SHA-256 of
// the key, which tells which key to open with and reveals nothing of it.
func keyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("fleet secret key id\x00"), key...))
	return hex.EncodeToString(sum[:4])
}

// NewSecretKeys returns the keys given, each SecretKeyLen bytes, the
// first being the one that seals.
func NewSecretKeys(keys ...[]byte) (*SecretKeys, error) {
	if len(keys) == 0 {
		return nil, errors.New("fleet: no secret key given")
	}
	k := &SecretKeys{}
	seen := map[string]bool{}
	for i, key := range keys {
		if len(key) != SecretKeyLen {
			return nil, fmt.Errorf("fleet: secret key %d is %d bytes, want %d", i+1, len(key), SecretKeyLen)
		}
		id := keyID(key)
		if seen[id] {
			return nil, fmt.Errorf("fleet: secret key %d is given twice", i+1)
		}
		seen[id] = true
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.keys = append(k.keys, sealingKey{id: id, aead: gcm})
	}
	return k, nil
}

// ParseSecretKeys reads a key file: one key a line, base64 of its 32 bytes
// (`head -c 32 /dev/urandom | base64`), the newest first; blank lines and
// lines starting with # are skipped.
func ParseSecretKeys(text []byte) (*SecretKeys, error) {
	var keys [][]byte
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, err := base64.StdEncoding.DecodeString(line)
		if err != nil || len(key) != SecretKeyLen {
			return nil, fmt.Errorf("fleet: key file line %d: want the base64 of %d random bytes", n, SecretKeyLen)
		}
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return NewSecretKeys(keys...)
}

// NewSecretKey returns a new random key as a key file's line holds it.
func NewSecretKey() string {
	var b [SecretKeyLen]byte
	rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// IDs returns the ids of the keys, the sealing one first, as sealed values
// name them.
func (k *SecretKeys) IDs() []string {
	out := make([]string, len(k.keys))
	for i, key := range k.keys {
		out[i] = key.id
	}
	return out
}

// sealedPrefix starts a sealed value: "sealed:v1:" + key id + ":" +
// base64url(nonce, ciphertext and tag).
const sealedPrefix = "sealed:v1:"

// isSealed reports whether a stored value is sealed (else it is a secret
// kept in plain text, from before secrets were sealed).
func isSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }

// sealedKeyID returns the id of the key a sealed value names.
func sealedKeyID(v string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(v, sealedPrefix), ":")
	return id
}

// seal encrypts plain under the first key, bound to ad.
func (k *SecretKeys) seal(ad []byte, plain string) string {
	key := k.keys[0]
	nonce := make([]byte, key.aead.NonceSize(), key.aead.NonceSize()+len(plain)+key.aead.Overhead())
	rand.Read(nonce)
	out := key.aead.Seal(nonce, nonce, []byte(plain), ad)
	return sealedPrefix + key.id + ":" + base64.RawURLEncoding.EncodeToString(out)
}

// open decrypts what seal made, with the key it names.
func (k *SecretKeys) open(ad []byte, sealed string) (string, error) {
	id, b64, ok := strings.Cut(strings.TrimPrefix(sealed, sealedPrefix), ":")
	if !ok || !isSealed(sealed) {
		return "", errors.New("fleet: not a sealed value")
	}
	for _, key := range k.keys {
		if key.id != id {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(b64)
		if err != nil || len(raw) < key.aead.NonceSize()+key.aead.Overhead() {
			return "", errors.New("fleet: a sealed value is malformed")
		}
		n := key.aead.NonceSize()
		plain, err := key.aead.Open(nil, raw[:n], raw[n:], ad)
		if err != nil {
			return "", fmt.Errorf("fleet: a value sealed under key %s does not open: it was altered or moved", id)
		}
		return string(plain), nil
	}
	return "", fmt.Errorf("fleet: a value is sealed under key %s, which is not among the server's keys (%s)", id, strings.Join(k.IDs(), ", "))
}
