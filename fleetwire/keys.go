package fleetwire

import "time"

// Account is the account object of the API (GET /v1/account).
type Account struct {
	AccountID        string    `json:"account_id"`
	CompanyName      string    `json:"company_name"`
	Plan             string    `json:"plan"`
	APIVersion       string    `json:"api_version"`
	RateLimitPerHour int       `json:"rate_limit_per_hour"`
	CreatedAt        time.Time `json:"created_at"`
}

// APIKey is the key object of the API: never the secret or its hash.
type APIKey struct {
	KeyID       string     `json:"key_id"`
	Name        string     `json:"name"`
	Prefix      string     `json:"prefix"`
	Permissions []string   `json:"permissions"`
	Environment string     `json:"environment"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	ExpiresAt   *time.Time `json:"expires_at"`
	RevokedAt   *time.Time `json:"revoked_at"`
}

// NewAPIKey is a key as created or rotated: the only time its secret
// shows (Key). On rotation PreviousKey is the old key with its new expiry.
type NewAPIKey struct {
	APIKey
	Key         string  `json:"key"`
	PreviousKey *APIKey `json:"previous_key,omitempty"`
}

// CreateKeyRequest is the body of POST /v1/api_keys.
type CreateKeyRequest struct {
	Name        string     `json:"name"`
	Permissions []string   `json:"permissions"`
	Environment string     `json:"environment"`
	ExpiresAt   *time.Time `json:"expires_at"`
}

// RotateKeyRequest is the body of POST /v1/api_keys/{key_id}/rotate; a
// nil GracePeriodSeconds is the default grace.
type RotateKeyRequest struct {
	GracePeriodSeconds *int64 `json:"grace_period_seconds"`
}

// UsageHour is one hour of a key's usage.
type UsageHour struct {
	Hour     time.Time `json:"hour"`
	Requests int       `json:"requests"`
	Rejected int       `json:"rejected"`
}

// KeyUsage is a key's hourly request counts, newest first, with totals.
type KeyUsage struct {
	KeyID  string      `json:"key_id"`
	Hours  []UsageHour `json:"hours"`
	Totals struct {
		Requests int `json:"requests"`
		Rejected int `json:"rejected"`
	} `json:"totals"`
}

// StreamToken is a token that opens one live stream of the key that made
// it, passed as ?token= (StreamTokenParam) where a client cannot send
// Authorization (a browser's EventSource). It is shown this once.
type StreamToken struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// StreamTokenParam is the query parameter of the live stream that carries
// a stream token.
const StreamTokenParam = "token"
