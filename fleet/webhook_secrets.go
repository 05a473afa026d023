package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/secret"
)

// webhookSecretData is what a webhook's sealed secrets are bound to: the
// endpoint's id, so that a sealed secret copied to another endpoint's row
// does not open.
func webhookSecretData(webhookID string) []byte {
	return []byte("fleet webhook signing secret\x00" + webhookID)
}

func errNoSecretKeys() *Error {
	return &Error{Code: CodeUnavailable,
		Message: "Webhooks are not available on this server: it has no key to seal their signing secrets with. Its operator must give it one."}
}

// sealWebhookSecret returns the form in which the store keeps a signing
// secret of the endpoint id: sealed under the first of the service's
// SecretKeys; as it is when the service has none (and does not require
// them).
func (s *Service) sealWebhookSecret(id, plain string) (string, error) {
	keys := s.opts.Webhooks.SecretKeys
	if keys == nil {
		if s.opts.Webhooks.RequireSecretKeys {
			return "", errNoSecretKeys()
		}
		return plain, nil
	}
	return keys.seal(webhookSecretData(id), plain), nil
}

// openWebhookSecret returns the signing secret the store keeps for the
// endpoint id in the form stored ("" stays "").
func (s *Service) openWebhookSecret(id, stored string) (string, error) {
	if stored == "" || !secret.IsSealed(stored) {
		return stored, nil // kept in plain text, from before sealing
	}
	keys := s.opts.Webhooks.SecretKeys
	if keys == nil {
		return "", fmt.Errorf("fleet: the secret of webhook endpoint %s is sealed (key %s) and the server has no secret keys", id, secret.SealedKeyID(stored))
	}
	return keys.open(webhookSecretData(id), stored)
}

// signingSecrets returns the secrets, opened, that sign a delivery to w at
// now (see Webhook.SigningSecrets).
func (s *Service) signingSecrets(w Webhook, now time.Time) ([]string, error) {
	out := w.SigningSecrets(now)
	for i, v := range out {
		var err error
		if out[i], err = s.openWebhookSecret(w.ID, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reseal returns the stored form of an endpoint's secret as the service
// keeps it now (sealed under the first key, or plain without keys), and
// whether that differs from stored.
func (s *Service) reseal(id, stored string) (string, bool, error) {
	if stored == "" {
		return "", false, nil
	}
	keys := s.opts.Webhooks.SecretKeys
	if keys == nil || (secret.IsSealed(stored) && secret.SealedKeyID(stored) == keys.keys.SealingID()) {
		return stored, false, nil
	}
	plain, err := s.openWebhookSecret(id, stored)
	if err != nil {
		return "", false, err
	}
	sealed, err := s.sealWebhookSecret(id, plain)
	return sealed, err == nil, err
}

// withoutSecrets is an endpoint as the read use cases return it: without
// its secrets, which are shown once, on create and rotate_secret.
func withoutSecrets(w Webhook) Webhook {
	w.Secret, w.PreviousSecret = "", ""
	return w
}

// SealedSecrets is what SealWebhookSecrets did.
type SealedSecrets struct {
	// Endpoints is how many endpoints there are.
	Endpoints int
	// Sealed is how many secrets it sealed that were kept in plain text;
	// Resealed how many it sealed again under the first key that an
	// older key had sealed.
	Sealed, Resealed int
}

// SealWebhookSecrets is the start's step that brings the endpoints'
// stored secrets to the service's keys (WebhookOptions.SecretKeys): it
// seals those kept in plain text, and seals again under the first key
// those an older key sealed, so that the older key may then be dropped. It
// is idempotent: a second run changes nothing. It fails, changing
// nothing, when a secret is sealed under a key the service does not hold,
// and when the service has no keys but requires them
// (WebhookOptions.RequireSecretKeys) while an endpoint exists. Without
// keys, and not requiring them, it does nothing.
func (o Operator) SealWebhookSecrets(ctx context.Context) (SealedSecrets, error) {
	s := o.s
	keys := s.opts.Webhooks.SecretKeys
	var out SealedSecrets
	if keys == nil && !s.opts.Webhooks.RequireSecretKeys {
		return out, nil
	}
	// First every account's endpoints are read and checked, so that a
	// secret no key opens stops the step before anything is written.
	type change struct{ accountID, webhookID string }
	var todo []change
	err := s.view(ctx, func(tx Tx) error {
		out, todo = SealedSecrets{}, todo[:0]
		ap := Page{Limit: MaxPageLimit}
		for {
			accounts, err := tx.Accounts(ap)
			if err != nil {
				return err
			}
			for _, a := range accounts {
				wp := Page{Limit: MaxPageLimit}
				for {
					ws, err := tx.Webhooks(a.ID, wp)
					if err != nil {
						return err
					}
					for _, w := range ws {
						out.Endpoints++
						if keys == nil {
							continue // counted, for the error below
						}
						changed := false
						for _, v := range []string{w.Secret, w.PreviousSecret} {
							_, c, err := s.reseal(w.ID, v)
							if err != nil {
								return fmt.Errorf("webhook endpoint %s: %w", w.ID, err)
							}
							changed = changed || c
						}
						if changed {
							todo = append(todo, change{a.ID, w.ID})
						}
					}
					if len(ws) < wp.Limit {
						break
					}
					wp.After = ws[len(ws)-1].ID
				}
			}
			if len(accounts) < ap.Limit {
				return nil
			}
			ap.After = accounts[len(accounts)-1].ID
		}
	})
	if err != nil {
		return out, err
	}
	if keys == nil && out.Endpoints > 0 {
		return out, Errorf(CodeUnavailable, "%d webhook endpoints exist and the server has no key to seal their signing secrets with.", out.Endpoints)
	}
	// Each endpoint in a transaction of its own, read again in it: a
	// rotation meanwhile is not undone, and a run cut short leaves every
	// secret openable.
	for _, c := range todo {
		var sealed, resealed int
		err := s.update(ctx, func(tx Tx) error {
			sealed, resealed = 0, 0
			w, err := tx.Webhook(c.accountID, c.webhookID)
			if ErrorCode(err) == CodeNotFound {
				return nil // deleted since
			}
			if err != nil {
				return err
			}
			for _, v := range []*string{&w.Secret, &w.PreviousSecret} {
				was := *v
				next, changed, err := s.reseal(w.ID, was)
				if err != nil {
					return fmt.Errorf("webhook endpoint %s: %w", w.ID, err)
				}
				if changed {
					*v = next
					if secret.IsSealed(was) {
						resealed++
					} else {
						sealed++
					}
				}
			}
			if sealed+resealed == 0 {
				return nil
			}
			return tx.UpdateWebhook(w)
		})
		if err != nil {
			return out, err
		}
		out.Sealed += sealed
		out.Resealed += resealed
	}
	return out, nil
}
