package fleet

import (
	"context"
	"time"
)

// StreamTokenStore is the stream tokens area of a Store: short-lived,
// single-use tokens that start one live stream (see CreateStreamToken). It
// runs outside transactions. A token is spent by taking it, so that of the
// servers sharing a store only one can start a stream with it.
type StreamTokenStore interface {
	// CreateStreamToken stores a new token. Returns conflict if a token
	// with the same hash is stored.
	CreateStreamToken(ctx context.Context, t StreamToken) error
	// TakeStreamToken removes the token whose hash is hash and returns it,
	// if it is still valid at now (now before its ExpiresAt). Returns
	// not_found when there is no such token, or when it has expired (an
	// expired token is removed all the same). Of any number of concurrent
	// calls for one token — across every process sharing the store, for a
	// store that can be shared — at most one returns it.
	TakeStreamToken(ctx context.Context, hash [32]byte, now time.Time) (StreamToken, error)
	// PurgeStreamTokens deletes tokens that expired before before, and
	// returns how many it deleted.
	PurgeStreamTokens(ctx context.Context, before time.Time) (int, error)
}
