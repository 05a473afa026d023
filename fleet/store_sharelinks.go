package fleet

import (
	"context"
	"time"
)

// ShareLinkTx is the share links area's part of a Tx: links that show one
// vehicle of an account on a public page (see ShareLink). Reads scoped by
// account return not_found for another account's link, as the rest of Tx
// does; a link's hash is unique across every account.
type ShareLinkTx interface {
	// CreateShareLink stores a new link. Returns conflict if the id or the
	// hash is stored already, not_found if the account does not exist.
	CreateShareLink(l ShareLink) error
	// ShareLink returns not_found if the account has no such link.
	ShareLink(accountID, id string) (ShareLink, error)
	// ShareLinkByHash returns the link whose token hashes to hash, of
	// whichever account and whatever its status; not_found if none.
	ShareLinkByHash(hash [32]byte) (ShareLink, error)
	// ShareLinksByID returns the links with these ids that are stored, of
	// whichever account, in any order: what a server asks, once for all of
	// its open share streams, to learn which links still stand.
	ShareLinksByID(ids []string) ([]ShareLink, error)
	// ShareLinks returns the account's links that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	ShareLinks(accountID string, f ShareLinkFilter, p Page) ([]ShareLink, error)
	// UpdateShareLink stores a link's RevokedAt, its only mutable field.
	// Returns not_found if the account has no such link.
	UpdateShareLink(l ShareLink) error
	// DeleteShareLinks deletes the account's links of a vehicle and returns
	// how many there were.
	DeleteShareLinks(accountID, vehicleID string) (int, error)
}

// ShareLinkStore is the share links area's part of a Store: the purge of
// links long over. It runs outside transactions.
type ShareLinkStore interface {
	// PurgeShareLinks deletes the links that expired before before, revoked
	// or not, and returns how many it deleted.
	PurgeShareLinks(ctx context.Context, before time.Time) (int, error)
}
