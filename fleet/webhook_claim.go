package fleet

import (
	"cmp"
	"slices"
	"time"
)

// Fair delivery: how much of a sender one endpoint and one account may
// hold at once, so that receivers that hang cost their own endpoint's
// slots and nobody else's.
const (
	// EndpointInFlight is how many deliveries of one endpoint a sender
	// makes at once.
	EndpointInFlight = 2
	// AccountInFlight is how many deliveries of one account's endpoints,
	// all of them together, a sender makes at once.
	AccountInFlight = 16
)

// DeliveryClaim is what a sender asks of Store.ClaimDeliveries: up to
// Limit pending deliveries due at Now, leased until Until, chosen by Pick:
// fairly across accounts and endpoints, within the caps on what one
// endpoint and one account may hold.
type DeliveryClaim struct {
	Now, Until time.Time
	Limit      int
	// PerEndpoint and PerAccount cap how many deliveries of one endpoint
	// and of one account the claimant may hold, those it holds already
	// included (0: no cap).
	PerEndpoint, PerAccount int
	// HeldByEndpoint and HeldByAccount count the deliveries the claimant
	// holds already (claimed, attempt not yet over), by endpoint id and by
	// account id.
	HeldByEndpoint, HeldByAccount map[string]int
}

// Candidates is how many of each endpoint's earliest due deliveries a
// store offers Pick at least (all of them if it has fewer): no endpoint
// gets more than that in one claim.
func (c *DeliveryClaim) Candidates() int {
	if c.PerEndpoint > 0 {
		return max(0, min(c.Limit, c.PerEndpoint))
	}
	return max(0, c.Limit)
}

// room returns how many more deliveries the claim may take of what one
// key (an endpoint or an account) holds under cap (0: no cap).
func room(limit, capped int, held map[string]int, key string) int {
	if capped <= 0 {
		return limit
	}
	return max(0, capped-held[key])
}

// Pick chooses what the claim takes among due, pending deliveries due at
// Now, given of each endpoint at least its Candidates() earliest (or all).
// Each endpoint and each account takes no more than its cap leaves room
// for; within an account its endpoints take turns (every endpoint's
// earliest before any endpoint's second), and accounts take turns in the
// same way (every account's first before any account's second), the
// earlier due first within a turn; the first Limit of that order are
// taken. So one account with many due deliveries takes no more than its
// share while others have some due. Pick returns the chosen deliveries,
// earliest due first, and whether any of due was left (over a cap or the
// limit).
func (c *DeliveryClaim) Pick(due []Delivery) (picked []Delivery, left bool) {
	type cand struct {
		d        *Delivery
		ep, turn int // its place among its endpoint's and among its account's
	}
	byDue := func(a, b *Delivery) int {
		var ta, tb time.Time
		if a.NextAttemptAt != nil {
			ta = *a.NextAttemptAt
		}
		if b.NextAttemptAt != nil {
			tb = *b.NextAttemptAt
		}
		return cmp.Or(ta.Compare(tb), cmp.Compare(a.ID, b.ID))
	}
	ds := make([]*Delivery, len(due))
	for i := range due {
		ds[i] = &due[i]
	}
	slices.SortFunc(ds, byDue)

	// Each endpoint: its earliest, as many as it has room for.
	taken := map[string]int{}
	cs := make([]cand, 0, len(ds))
	for _, d := range ds {
		n := taken[d.WebhookID]
		if n >= room(c.Limit, c.PerEndpoint, c.HeldByEndpoint, d.WebhookID) {
			left = true
			continue
		}
		taken[d.WebhookID] = n + 1
		cs = append(cs, cand{d: d, ep: n})
	}
	// Each account: its endpoints in turn, as many as it has room for.
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.ep, b.ep) })
	clear(taken)
	kept := cs[:0]
	for _, x := range cs {
		n := taken[x.d.AccountID]
		if n >= room(c.Limit, c.PerAccount, c.HeldByAccount, x.d.AccountID) {
			left = true
			continue
		}
		taken[x.d.AccountID] = n + 1
		x.turn = n
		kept = append(kept, x)
	}
	// Accounts in turn, up to the limit.
	slices.SortFunc(kept, func(a, b cand) int { return cmp.Or(cmp.Compare(a.turn, b.turn), byDue(a.d, b.d)) })
	if n := max(c.Limit, 0); len(kept) > n {
		kept, left = kept[:n], true
	}
	picked = make([]Delivery, len(kept))
	for i, x := range kept {
		picked[i] = *x.d
	}
	slices.SortFunc(picked, func(a, b Delivery) int { return byDue(&a, &b) })
	return picked, left
}
