package fleet

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"time"
)

// A stream token lets a client that cannot send an Authorization header (a
// browser's EventSource) open one live stream for the key that made it:
// "fst_" + 43 random base62 characters, valid for StreamTokenTTL, spent by
// its first use whatever that use's outcome. Only its SHA-256 is stored.
const (
	StreamTokenPrefix = "fst_"
	streamTokenRandom = 43 // about 256 bits
	StreamTokenLen    = len(StreamTokenPrefix) + streamTokenRandom
	StreamTokenTTL    = 60 * time.Second
)

// StreamToken is a stored stream token: the hash of its secret, the key it
// acts for, and when it stops being usable.
type StreamToken struct {
	Hash      [32]byte
	KeyID     string
	AccountID string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// NewStreamToken is a token as its creator receives it, the only time its
// secret is shown.
type NewStreamToken struct {
	Token     string
	ExpiresAt time.Time
}

func newStreamTokenSecret() string {
	var b [StreamTokenLen]byte
	copy(b[:], StreamTokenPrefix)
	random := b[len(StreamTokenPrefix):]
	var buf [64]byte
	for n := 0; n < len(random); {
		rand.Read(buf[:])
		for _, c := range buf {
			if c < 248 && n < len(random) { // 248 = 4*62: every character equally likely
				random[n] = base62[c%62]
				n++
			}
		}
	}
	return string(b[:])
}

// checkStreamToken reports whether s has the shape of a stream token.
func checkStreamToken(s string) bool {
	if len(s) != StreamTokenLen || s[:len(StreamTokenPrefix)] != StreamTokenPrefix {
		return false
	}
	for i := len(StreamTokenPrefix); i < len(s); i++ {
		if !isBase62(s[i]) {
			return false
		}
	}
	return true
}

func errInvalidStreamToken() *Error {
	return &Error{Code: CodeUnauthorized,
		Message: "The stream token is invalid: it is unknown, already used or expired. Make a new one with POST /v1/stream_tokens just before opening the stream."}
}

// CreateStreamToken makes a token that starts one live stream of the
// principal's key within StreamTokenTTL, for clients that cannot send the
// key in a header. The stream it opens is the key's: it needs the key to be
// valid when it starts, counts against the key's streams, and ends when the
// key is revoked or expires.
func (s *Service) CreateStreamToken(ctx context.Context, p Principal) (NewStreamToken, error) {
	if err := p.allow("CreateStreamToken"); err != nil {
		return NewStreamToken{}, err
	}
	now := s.Now()
	secret := newStreamTokenSecret()
	t := StreamToken{Hash: sha256.Sum256([]byte(secret)), KeyID: p.Key.ID, AccountID: p.Account.ID,
		CreatedAt: now, ExpiresAt: now.Add(StreamTokenTTL)}
	if err := s.store.CreateStreamToken(ctx, t); err != nil {
		return NewStreamToken{}, err
	}
	return NewStreamToken{Token: secret, ExpiresAt: t.ExpiresAt}, nil
}

// RedeemStreamToken spends a stream token and returns the principal of the
// key that made it, for the one stream the token starts. An unknown, used
// or expired token, or one whose key is no longer valid, is unauthorized;
// the token is spent whatever the outcome. A malformed token is refused
// without a store lookup.
func (e Edge) RedeemStreamToken(ctx context.Context, token string) (Principal, error) {
	s := e.s
	if !checkStreamToken(token) {
		return Principal{}, errInvalidStreamToken()
	}
	t, err := s.store.TakeStreamToken(ctx, sha256.Sum256([]byte(token)), s.Now())
	if err != nil {
		if ErrorCode(err) == CodeNotFound {
			return Principal{}, errInvalidStreamToken()
		}
		return Principal{}, err
	}
	var k Key
	err = s.view(ctx, func(tx Tx) (err error) {
		k, err = tx.Key(t.AccountID, t.KeyID)
		return err
	})
	if err != nil {
		if ErrorCode(err) == CodeNotFound {
			return Principal{}, errInvalidStreamToken()
		}
		return Principal{}, err
	}
	// Through the key cache, as every request is: a revoked or expired key
	// is refused with its own message.
	return s.principalByHash(ctx, k.Hash)
}
