package memstore

import (
	"context"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// streamTokens holds the stream tokens by hash, under their own lock.
type streamTokens struct {
	m map[[32]byte]fleet.StreamToken
}

// CreateStreamToken implements fleet.Store.
func (s *Store) CreateStreamToken(ctx context.Context, t fleet.StreamToken) error {
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	if s.tokens.m == nil {
		s.tokens.m = map[[32]byte]fleet.StreamToken{}
	}
	if _, ok := s.tokens.m[t.Hash]; ok {
		return fleet.Errorf(fleet.CodeConflict, "The stream token exists.")
	}
	s.tokens.m[t.Hash] = t
	return nil
}

// TakeStreamToken implements fleet.Store.
func (s *Store) TakeStreamToken(ctx context.Context, hash [32]byte, now time.Time) (fleet.StreamToken, error) {
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	t, ok := s.tokens.m[hash]
	if !ok {
		return fleet.StreamToken{}, fleet.Errorf(fleet.CodeNotFound, "No such stream token.")
	}
	delete(s.tokens.m, hash)
	if !now.Before(t.ExpiresAt) {
		return fleet.StreamToken{}, fleet.Errorf(fleet.CodeNotFound, "No such stream token.")
	}
	return t, nil
}

// PurgeStreamTokens implements fleet.Store.
func (s *Store) PurgeStreamTokens(ctx context.Context, before time.Time) (int, error) {
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	return deleteWhere(s.tokens.m, func(t fleet.StreamToken) bool { return t.ExpiresAt.Before(before) }), nil
}
