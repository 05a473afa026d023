package fleethttp

import (
	"net/http"

	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// The Go client moved to package fleetclient, and the API's wire types to
// package fleetwire, so that a program that only calls the API links
// neither the handler nor its dependencies. What follows keeps programs
// written against the names here compiling, unchanged, through every
// v0.2.x release; they are removed in v0.3.0 (CHANGELOG.md). Each is the
// same type or does the same as its new home.

// Client is the Go SDK of the Fleet API.
//
// Deprecated: use fleetclient.Client. Removed in v0.3.0.
type Client = fleetclient.Client

// ClientOption configures a Client.
//
// Deprecated: use fleetclient.ClientOption. Removed in v0.3.0.
type ClientOption = fleetclient.ClientOption

// NewClient returns a client of the API at baseURL using the API key.
//
// Deprecated: use fleetclient.NewClient. Removed in v0.3.0.
func NewClient(baseURL, apiKey string, opts ...ClientOption) *Client {
	return fleetclient.NewClient(baseURL, apiKey, opts...)
}

// WithHTTPClient sets the *http.Client requests go through.
//
// Deprecated: use fleetclient.WithHTTPClient. Removed in v0.3.0.
func WithHTTPClient(hc *http.Client) ClientOption { return fleetclient.WithHTTPClient(hc) }

// WithoutRateLimitWait makes a 429 come back at once as an error.
//
// Deprecated: use fleetclient.WithoutRateLimitWait. Removed in v0.3.0.
func WithoutRateLimitWait() ClientOption { return fleetclient.WithoutRateLimitWait() }

// WithMaxRetries sets how often a request is retried.
//
// Deprecated: use fleetclient.WithMaxRetries. Removed in v0.3.0.
func WithMaxRetries(n int) ClientOption { return fleetclient.WithMaxRetries(n) }

// WithPageSize sets how many items list methods ask for per page.
//
// Deprecated: use fleetclient.WithPageSize. Removed in v0.3.0.
func WithPageSize(n int) ClientOption { return fleetclient.WithPageSize(n) }

// VehicleQuery filters a vehicle list or the location snapshot.
//
// Deprecated: use fleetclient.VehicleQuery. Removed in v0.3.0.
type VehicleQuery = fleetclient.VehicleQuery

// SummaryQuery selects the rows of Client.Summary.
//
// Deprecated: use fleetclient.SummaryQuery. Removed in v0.3.0.
type SummaryQuery = fleetclient.SummaryQuery

// WebhookParams describe a new webhook endpoint.
//
// Deprecated: use fleetclient.WebhookParams. Removed in v0.3.0.
type WebhookParams = fleetclient.WebhookParams

// LiveLocation is one report from the live stream.
//
// Deprecated: use fleetclient.LiveLocation. Removed in v0.3.0.
type LiveLocation = fleetclient.LiveLocation

// APIError is an error the API answered.
//
// Deprecated: use fleetclient.APIError. Removed in v0.3.0.
type APIError = fleetclient.APIError

// TransportError is a request that got no answer from the API.
//
// Deprecated: use fleetclient.TransportError. Removed in v0.3.0.
type TransportError = fleetclient.TransportError

// Account is the account object of the API.
//
// Deprecated: use fleetwire.Account. Removed in v0.3.0.
type Account = fleetwire.Account

// APIKey is the key object of the API.
//
// Deprecated: use fleetwire.APIKey. Removed in v0.3.0.
type APIKey = fleetwire.APIKey

// NewAPIKey is a key as created or rotated, with its secret.
//
// Deprecated: use fleetwire.NewAPIKey. Removed in v0.3.0.
type NewAPIKey = fleetwire.NewAPIKey

// UsageHour is one hour of a key's usage.
//
// Deprecated: use fleetwire.UsageHour. Removed in v0.3.0.
type UsageHour = fleetwire.UsageHour

// KeyUsage is a key's hourly request counts.
//
// Deprecated: use fleetwire.KeyUsage. Removed in v0.3.0.
type KeyUsage = fleetwire.KeyUsage

// StreamToken is a token that opens one live stream.
//
// Deprecated: use fleetwire.StreamToken. Removed in v0.3.0.
type StreamToken = fleetwire.StreamToken
