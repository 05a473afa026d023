package fleet

import (
	"fmt"

	"github.com/fleetkit/fleetapi/fleet/internal/secret"
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
	keys *secret.Keys // the first seals; each opens what it sealed
}

// SecretKeyLen is the length of a secret key: 256 bits.
const SecretKeyLen = secret.KeyLen

// NewSecretKeys returns the keys given, each SecretKeyLen bytes, the
// first being the one that seals.
func NewSecretKeys(keys ...[]byte) (*SecretKeys, error) {
	k, err := secret.NewKeys(keys...)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	return &SecretKeys{keys: k}, nil
}

// ParseSecretKeys reads a key file: one key a line, base64 of its 32 bytes
// (`head -c 32 /dev/urandom | base64`), the newest first; blank lines and
// lines starting with # are skipped.
func ParseSecretKeys(text []byte) (*SecretKeys, error) {
	k, err := secret.ParseKeys(text)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	return &SecretKeys{keys: k}, nil
}

// NewSecretKey returns a new random key as a key file's line holds it.
func NewSecretKey() string { return secret.NewKey() }

// IDs returns the ids of the keys, the sealing one first, as sealed values
// name them: 8 hex digits of a SHA-256 of the key, which tell which key to
// open with and reveal nothing of it.
func (k *SecretKeys) IDs() []string { return k.keys.IDs() }

// seal encrypts plain under the first key, bound to ad.
func (k *SecretKeys) seal(ad []byte, plain string) string { return k.keys.Seal(ad, plain) }

// open decrypts what seal made, with the key it names.
func (k *SecretKeys) open(ad []byte, sealed string) (string, error) {
	plain, err := k.keys.Open(ad, sealed)
	if err != nil {
		return "", fmt.Errorf("fleet: %w", err)
	}
	return plain, nil
}
