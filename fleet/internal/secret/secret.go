// Package secret seals what Fleet must keep in a form it can use again,
// so that a copy of the store alone reveals none of it: AES-256-GCM, each
// value bound to what it belongs to (additional data the caller gives).
//
// Keys seals strings under a ring of keys named by ids, the first sealing
// and each opening what it sealed, so that a key can be replaced without
// a moment when a value cannot be opened (webhook signing secrets).
// SealBytes and OpenBytes seal bytes under one key derived from a secret
// the store never holds (Derive), for values only the holder of that
// secret may open (idempotent responses).
//
// What is sealed, with which key and bound to what, are package fleet's
// rules.
package secret

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeyLen is the length of a key: 256 bits.
const KeyLen = 32

// Keys are keys that seal and open values: the first seals; each opens
// what it sealed, named by its id in the value.
type Keys struct {
	keys []sealingKey
}

type sealingKey struct {
	id   string // keyID of the key
	aead cipher.AEAD
}

// keyID names a key in the values it seals: 8 hex digits of a SHA-256 of
// the key, which tells which key to open with and reveals nothing of it.
func keyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("fleet secret key id\x00"), key...))
	return hex.EncodeToString(sum[:4])
}

// NewKeys returns the keys given, each KeyLen bytes, the first being the
// one that seals.
func NewKeys(keys ...[]byte) (*Keys, error) {
	if len(keys) == 0 {
		return nil, errors.New("no secret key given")
	}
	k := &Keys{}
	seen := map[string]bool{}
	for i, key := range keys {
		if len(key) != KeyLen {
			return nil, fmt.Errorf("secret key %d is %d bytes, want %d", i+1, len(key), KeyLen)
		}
		id := keyID(key)
		if seen[id] {
			return nil, fmt.Errorf("secret key %d is given twice", i+1)
		}
		seen[id] = true
		gcm, err := newAEAD(key)
		if err != nil {
			return nil, err
		}
		k.keys = append(k.keys, sealingKey{id: id, aead: gcm})
	}
	return k, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// ParseKeys reads a key file: one key a line, base64 of its KeyLen bytes
// (`head -c 32 /dev/urandom | base64`), the newest first; blank lines and
// lines starting with # are skipped.
func ParseKeys(text []byte) (*Keys, error) {
	var keys [][]byte
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, err := base64.StdEncoding.DecodeString(line)
		if err != nil || len(key) != KeyLen {
			return nil, fmt.Errorf("key file line %d: want the base64 of %d random bytes", n, KeyLen)
		}
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return NewKeys(keys...)
}

// NewKey returns a new random key as a key file's line holds it.
func NewKey() string {
	var b [KeyLen]byte
	rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// IDs returns the ids of the keys, the sealing one first, as sealed values
// name them.
func (k *Keys) IDs() []string {
	out := make([]string, len(k.keys))
	for i, key := range k.keys {
		out[i] = key.id
	}
	return out
}

// SealingID returns the id of the key that seals.
func (k *Keys) SealingID() string { return k.keys[0].id }

// sealedPrefix starts a sealed value: "sealed:v1:" + key id + ":" +
// base64url(nonce, ciphertext and tag).
const sealedPrefix = "sealed:v1:"

// IsSealed reports whether a stored value is sealed (else it is a secret
// kept in plain text, from before secrets were sealed).
func IsSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }

// SealedKeyID returns the id of the key a sealed value names.
func SealedKeyID(v string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(v, sealedPrefix), ":")
	return id
}

// Seal encrypts plain under the first key, bound to ad.
func (k *Keys) Seal(ad []byte, plain string) string {
	key := k.keys[0]
	nonce := make([]byte, key.aead.NonceSize(), key.aead.NonceSize()+len(plain)+key.aead.Overhead())
	rand.Read(nonce)
	out := key.aead.Seal(nonce, nonce, []byte(plain), ad)
	return sealedPrefix + key.id + ":" + base64.RawURLEncoding.EncodeToString(out)
}

// Open decrypts what Seal made, with the key it names, bound to ad.
func (k *Keys) Open(ad []byte, sealed string) (string, error) {
	id, b64, ok := strings.Cut(strings.TrimPrefix(sealed, sealedPrefix), ":")
	if !ok || !IsSealed(sealed) {
		return "", errors.New("not a sealed value")
	}
	for _, key := range k.keys {
		if key.id != id {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(b64)
		if err != nil || len(raw) < key.aead.NonceSize()+key.aead.Overhead() {
			return "", errors.New("a sealed value is malformed")
		}
		n := key.aead.NonceSize()
		plain, err := key.aead.Open(nil, raw[:n], raw[n:], ad)
		if err != nil {
			return "", fmt.Errorf("a value sealed under key %s does not open: it was altered or moved", id)
		}
		return string(plain), nil
	}
	return "", fmt.Errorf("a value is sealed under key %s, which is not among the server's keys (%s)", id, strings.Join(k.IDs(), ", "))
}

// Derive returns the key of a secret for one use: HMAC-SHA256 keyed with
// the secret over a label that names the use.
func Derive(secret, label string) [KeyLen]byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(label))
	var k [KeyLen]byte
	m.Sum(k[:0])
	return k
}

// sealedV1 starts every value SealBytes makes.
const sealedV1 = 1

func aeadOf(key [KeyLen]byte) cipher.AEAD {
	gcm, err := newAEAD(key[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	return gcm
}

// SealBytes encrypts plain under key, bound to ad: version, nonce, then
// ciphertext and tag.
func SealBytes(key [KeyLen]byte, ad, plain []byte) []byte {
	gcm := aeadOf(key)
	out := make([]byte, 1+gcm.NonceSize(), 1+gcm.NonceSize()+len(plain)+gcm.Overhead())
	out[0] = sealedV1
	rand.Read(out[1:])
	return gcm.Seal(out, out[1:], plain, ad)
}

// OpenBytes decrypts what SealBytes made under key, bound to ad; false
// when it does not open (another key, other data, altered, or not sealed).
func OpenBytes(key [KeyLen]byte, ad, sealed []byte) ([]byte, bool) {
	gcm := aeadOf(key)
	if len(sealed) < 1+gcm.NonceSize()+gcm.Overhead() || sealed[0] != sealedV1 {
		return nil, false
	}
	nonce := sealed[1 : 1+gcm.NonceSize()]
	plain, err := gcm.Open(nil, nonce, sealed[1+gcm.NonceSize():], ad)
	if err != nil {
		return nil, false
	}
	return plain, true
}
