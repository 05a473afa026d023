package fleet_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

func mustKeys(t testing.TB, keys ...[]byte) *fleet.SecretKeys {
	t.Helper()
	k, err := fleet.NewSecretKeys(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	keyA = bytes.Repeat([]byte{0xa1}, 32)
	keyB = bytes.Repeat([]byte{0xb2}, 32)
)

// webhookService is a service with keys (nil: none) on store, and a pro
// account's system principal.
func webhookService(t testing.TB, store fleet.Store, clock *testclock.Clock, keys *fleet.SecretKeys) *fleet.Service {
	t.Helper()
	return fleet.NewService(store, fleet.Options{Now: clock.Now, Webhooks: fleet.WebhookOptions{Insecure: true, SecretKeys: keys}})
}

func proAccount(t testing.TB, svc *fleet.Service) fleet.Principal {
	t.Helper()
	a, _, err := svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	return fleet.SystemPrincipal(a)
}

// stored reads an endpoint as the store keeps it.
func stored(t testing.TB, store fleet.Store, p fleet.Principal, id string) fleet.Webhook {
	t.Helper()
	var w fleet.Webhook
	err := store.View(context.Background(), func(tx fleet.Tx) (err error) { w, err = tx.Webhook(p.Account.ID, id); return err })
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// claimSecrets makes a test delivery of the endpoint and claims it as a
// sender does, returning the secrets the sender is given to sign with.
func claimSecrets(t testing.TB, svc *fleet.Service, p fleet.Principal, id string) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.TestWebhook(ctx, p, id); err != nil {
		t.Fatal(err)
	}
	jobs, _, err := svc.Jobs().ClaimDeliveries(ctx, time.Minute, fleet.DeliveryClaim{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range jobs {
		if j.Delivery.WebhookID == id {
			out = append(out, j.Secrets...)
			if _, err := svc.Jobs().FinishDelivery(ctx, j, fleet.Outcome{Status: 200}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// notIn fails unless neither the secret nor the first 12 characters of its
// random part are in the stored value.
func notIn(t testing.TB, storedValue, secret string) {
	t.Helper()
	part := strings.TrimPrefix(secret, fleet.WebhookSecretPrefix)[:12]
	if strings.Contains(storedValue, secret) || strings.Contains(storedValue, part) {
		t.Fatalf("the store holds the secret %s... in plain text", secret[:10])
	}
}

// The service seals an endpoint's signing secrets before the store sees
// them, bound to the endpoint: the store holds neither the secret nor the
// old one after a rotation, the read use cases return no secret, and the
// sender is given the plain secrets (both during the overlap) that sign so
// that the secrets the API returned verify.
func TestWebhookSecretsAreSealedBeforeTheStore(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	store := memstore.New()
	svc := webhookService(t, store, clock, mustKeys(t, keyA))
	p := proAccount(t, svc)
	created, err := svc.CreateWebhook(ctx, p, fleet.Webhook{URL: "http://127.0.0.1:9/hook", Enabled: true})
	is.NoErr(err)
	is.True(strings.HasPrefix(created.Secret, fleet.WebhookSecretPrefix))
	is.Equal(created.Webhook.Secret, "") // the endpoint itself carries none

	w := stored(t, store, p, created.ID)
	is.True(strings.HasPrefix(w.Secret, "sealed:v1:"))
	notIn(t, w.Secret, created.Secret)
	got, err := svc.Webhook(ctx, p, created.ID)
	is.NoErr(err)
	is.Equal(got.Secret+got.PreviousSecret, "") // read use cases return no secret
	is.Equal(claimSecrets(t, svc, p, created.ID), []string{created.Secret})

	rotated, err := svc.RotateWebhookSecret(ctx, p, created.ID)
	is.NoErr(err)
	w = stored(t, store, p, created.ID)
	for _, v := range []string{w.Secret, w.PreviousSecret} {
		is.True(strings.HasPrefix(v, "sealed:v1:"))
		notIn(t, v, created.Secret)
		notIn(t, v, rotated.Secret)
	}
	secrets := claimSecrets(t, svc, p, created.ID)
	is.Equal(secrets, []string{rotated.Secret, created.Secret}) // both sign during the overlap
	sig, err := fleet.SignWebhook(secrets, "evt_1", clock.Now().Unix(), []byte(`{}`))
	is.NoErr(err)
	for _, s := range []string{created.Secret, rotated.Secret} {
		is.NoErr(fleet.VerifyWebhook(s, "evt_1", strconv.FormatInt(clock.Now().Unix(), 10), sig, []byte(`{}`), clock.Now()))
	}
	clock.Advance(fleet.SecretOverlap)
	is.Equal(claimSecrets(t, svc, p, created.ID), []string{rotated.Secret}) // then the new one alone

	// A sealed secret is bound to its endpoint: copied onto another, it
	// does not open, and that endpoint's deliveries are not made.
	other, err := svc.CreateWebhook(ctx, p, fleet.Webhook{URL: "http://127.0.0.1:9/other", Enabled: true})
	is.NoErr(err)
	is.NoErr(store.Update(ctx, func(tx fleet.Tx) error {
		o, err := tx.Webhook(p.Account.ID, other.ID)
		if err != nil {
			return err
		}
		o.Secret = w.Secret
		return tx.UpdateWebhook(o)
	}))
	is.Equal(len(claimSecrets(t, svc, p, other.ID)), 0)
}

// Secrets kept in plain text by an earlier version are sealed by the
// start's step, which is idempotent; and a new key put first in the key
// file takes over every secret at the next start, after which the old key
// may go. A secret under a key the server lacks stops the step, naming the
// key, and changes nothing.
func TestSealWebhookSecretsOnStart(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	store := memstore.New()
	plain := webhookService(t, store, clock, nil) // an earlier version: no keys
	p := proAccount(t, plain)
	var ids, secrets []string
	for _, u := range []string{"http://127.0.0.1:9/a", "http://127.0.0.1:9/b"} {
		w, err := plain.CreateWebhook(ctx, p, fleet.Webhook{URL: u, Enabled: true})
		is.NoErr(err)
		ids, secrets = append(ids, w.ID), append(secrets, w.Secret)
	}
	rot, err := plain.RotateWebhookSecret(ctx, p, ids[1])
	is.NoErr(err)
	is.Equal(stored(t, store, p, ids[0]).Secret, secrets[0]) // plain text, as before

	withA := webhookService(t, store, clock, mustKeys(t, keyA))
	is.Equal(claimSecrets(t, withA, p, ids[0]), []string{secrets[0]}) // plain ones still sign before the step
	n, err := withA.Operator().SealWebhookSecrets(ctx)
	is.NoErr(err)
	is.Equal(n, fleet.SealedSecrets{Endpoints: 2, Sealed: 3})
	n, err = withA.Operator().SealWebhookSecrets(ctx)
	is.NoErr(err)
	is.Equal(n, fleet.SealedSecrets{Endpoints: 2}) // idempotent
	for i, id := range ids {
		w := stored(t, store, p, id)
		notIn(t, w.Secret+w.PreviousSecret, secrets[i])
		notIn(t, w.Secret+w.PreviousSecret, rot.Secret)
	}
	is.Equal(claimSecrets(t, withA, p, ids[0]), []string{secrets[0]})
	is.Equal(claimSecrets(t, withA, p, ids[1]), []string{rot.Secret, secrets[1]})

	// Rotation of the server key: B first, A after it.
	withBA := webhookService(t, store, clock, mustKeys(t, keyB, keyA))
	is.Equal(claimSecrets(t, withBA, p, ids[1]), []string{rot.Secret, secrets[1]}) // A's values open
	n, err = withBA.Operator().SealWebhookSecrets(ctx)
	is.NoErr(err)
	is.Equal(n, fleet.SealedSecrets{Endpoints: 2, Resealed: 3})
	withB := webhookService(t, store, clock, mustKeys(t, keyB))
	n, err = withB.Operator().SealWebhookSecrets(ctx)
	is.NoErr(err)
	is.Equal(n, fleet.SealedSecrets{Endpoints: 2}) // nothing left under A
	is.Equal(claimSecrets(t, withB, p, ids[1]), []string{rot.Secret, secrets[1]})

	// A server with only the old key cannot open them, and says which key.
	before := stored(t, store, p, ids[0])
	_, err = withA.Operator().SealWebhookSecrets(ctx)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), mustKeys(t, keyB).IDs()[0]))
	is.Equal(stored(t, store, p, ids[0]), before) // nothing changed
}

// A server that requires keys and has none (fleetserver on PostgreSQL
// without --secrets-key-file) registers no endpoint and rotates no secret,
// and its start fails once an endpoint exists; without endpoints it starts.
func TestWebhooksNeedSecretKeysWhenRequired(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	store := memstore.New()
	none := fleet.NewService(store, fleet.Options{Now: clock.Now, Webhooks: fleet.WebhookOptions{Insecure: true, RequireSecretKeys: true}})
	p := proAccount(t, none)
	_, err := none.Operator().SealWebhookSecrets(ctx)
	is.NoErr(err) // no endpoint yet
	_, err = none.CreateWebhook(ctx, p, fleet.Webhook{URL: "http://127.0.0.1:9/a", Enabled: true})
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	is.True(strings.Contains(fleet.ErrorMessage(err), "no key to seal"))
	l, err := none.ListWebhooks(ctx, p, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 0) // nothing was stored

	withA := webhookService(t, store, clock, mustKeys(t, keyA))
	w, err := withA.CreateWebhook(ctx, p, fleet.Webhook{URL: "http://127.0.0.1:9/a", Enabled: true})
	is.NoErr(err)
	_, err = none.RotateWebhookSecret(ctx, p, w.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	_, err = none.Operator().SealWebhookSecrets(ctx)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	is.True(strings.Contains(fleet.ErrorMessage(err), "1 webhook endpoints exist"))
}

// ParseSecretKeys and NewSecretKeys read keys as internal/secret does
// (tested there), and their errors say they are fleet's.
func TestParseSecretKeys(t *testing.T) {
	is := is.New(t)
	a, b := fleet.NewSecretKey(), fleet.NewSecretKey()
	k, err := fleet.ParseSecretKeys([]byte("# newest first\n" + b + "\n" + a + "\n"))
	is.NoErr(err)
	is.Equal(len(k.IDs()), 2)
	kb, err := fleet.ParseSecretKeys([]byte(b))
	is.NoErr(err)
	is.Equal(k.IDs()[0], kb.IDs()[0]) // the first seals
	_, err = fleet.ParseSecretKeys([]byte("c2hvcnQ=\n"))
	is.Equal(err.Error(), "fleet: key file line 1: want the base64 of 32 random bytes")
	_, err = fleet.NewSecretKeys(keyA, keyA)
	is.Equal(err.Error(), "fleet: secret key 2 is given twice")
	is.Equal(fleet.SecretKeyLen, 32)
}
