package fleet

import (
	"context"
	"unicode/utf8"
)

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
// repeat of a finished request, and conflict when the key was used with
// another request or the first request is still running.
func (s *Service) BeginIdempotent(ctx context.Context, p Principal, idemKey string, requestHash [32]byte) (*IdempotencyRecord, error) {
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
	return &prev, nil
}

// FinishIdempotent records the response of a request begun with
// BeginIdempotent, for repeats to replay.
func (s *Service) FinishIdempotent(ctx context.Context, p Principal, idemKey string, status int, body []byte) error {
	return s.store.FinishIdempotency(ctx, p.Key.ID, idemKey, status, body)
}

// AbandonIdempotent forgets a begun request that failed in a way a retry may
// repeat (a server error), so that the retry runs.
func (s *Service) AbandonIdempotent(ctx context.Context, p Principal, idemKey string) error {
	return s.store.DeleteIdempotency(ctx, p.Key.ID, idemKey)
}
