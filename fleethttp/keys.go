package fleethttp

import (
	"net/http"
	"strconv"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

func toAccount(a fleet.Account) fleetwire.Account {
	return fleetwire.Account{
		AccountID: a.ID, CompanyName: a.CompanyName, Plan: string(a.Plan), APIVersion: fleet.APIVersion,
		RateLimitPerHour: a.RateLimitPerHour(), CreatedAt: a.CreatedAt,
	}
}

// getAccount answers from the account authentication read with the key, so
// checking a key costs no store read (it is at most AuthCacheTTL old).
func (h *Handler) getAccount(c *call) error {
	a := toAccount(c.p.Account)
	if !plainJSONText(a.AccountID) || !plainJSONText(a.CompanyName) || !plainJSONText(a.Plan) || !plainJSONText(a.APIVersion) {
		return c.ok(http.StatusOK, a) // text to escape: encoding/json's rules
	}
	if c.validated {
		writeJSONTagged(c.w, c.r, http.StatusOK, accountAnswer(a))
	} else {
		writeJSON(c.w, http.StatusOK, accountAnswer(a))
	}
	return nil
}

// accountAnswer is GET /v1/account's answer written field by field, the
// bytes encoding/json writes for the envelope (TestAccountAnswerBytes),
// without reflection: the most frequent authenticated call, and the
// request path's benchmark (BenchmarkGetAccount). It is used only when
// every text is plain (plainJSONText).
type accountAnswer fleetwire.Account

func (a accountAnswer) appendJSON(b []byte) []byte {
	b = append(b, `{"success":true,"data":{"account_id":"`...)
	b = append(b, a.AccountID...)
	b = append(b, `","company_name":"`...)
	b = append(b, a.CompanyName...)
	b = append(b, `","plan":"`...)
	b = append(b, a.Plan...)
	b = append(b, `","api_version":"`...)
	b = append(b, a.APIVersion...)
	b = append(b, `","rate_limit_per_hour":`...)
	b = strconv.AppendInt(b, int64(a.RateLimitPerHour), 10)
	b = append(b, `,"created_at":"`...)
	b = a.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}}`...)
}

// plainJSONText reports whether s is written in JSON as it is, between
// quotes: printable ASCII without a quote or a backslash.
func plainJSONText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func toAPIKey(k fleet.Key, now time.Time) fleetwire.APIKey {
	perms := []string(k.Permissions)
	if perms == nil {
		perms = []string{}
	}
	return fleetwire.APIKey{
		KeyID: k.ID, Name: k.Name, Prefix: k.Prefix, Permissions: perms, Environment: k.Environment,
		Status: string(k.Status(now)), CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt,
		ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}
}

func (h *Handler) listKeys(c *call) error {
	_, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListKeys(c.r.Context(), c.p, lq)
	if err != nil {
		return err
	}
	now := h.svc.Now()
	out := make([]fleetwire.APIKey, len(l.Items))
	for i, k := range l.Items {
		out[i] = toAPIKey(k, now)
	}
	return c.list(out, l.NextCursor, l.HasMore)
}

func (h *Handler) createKey(c *call) error {
	req, err := decode[fleetwire.CreateKeyRequest](c.body, false)
	if err != nil {
		return err
	}
	nk, err := h.svc.CreateKey(c.r.Context(), c.p, fleet.KeyParams{
		Name: req.Name, Permissions: req.Permissions, Environment: req.Environment, ExpiresAt: req.ExpiresAt,
	})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, fleetwire.NewAPIKey{APIKey: toAPIKey(nk.Key, h.svc.Now()), Key: nk.Secret})
}

func (h *Handler) getKey(c *call) error {
	k, err := h.svc.Key(c.r.Context(), c.p, c.r.PathValue("key_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, toAPIKey(k, h.svc.Now()))
}

func (h *Handler) revokeKey(c *call) error {
	k, err := h.svc.RevokeKey(c.r.Context(), c.p, c.r.PathValue("key_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, toAPIKey(k, h.svc.Now()))
}

func (h *Handler) rotateKey(c *call) error {
	req, err := decode[fleetwire.RotateKeyRequest](c.body, true)
	if err != nil {
		return err
	}
	grace := fleet.DefaultRotationGrace
	if req.GracePeriodSeconds != nil {
		// Seconds beyond the longest grace would overflow a Duration: any
		// of them is as out of range to the service as the first.
		s := min(*req.GracePeriodSeconds, int64(fleet.MaxRotationGrace/time.Second)+1)
		grace = time.Duration(s) * time.Second
	}
	id := c.r.PathValue("key_id")
	nk, err := h.svc.RotateKey(c.r.Context(), c.p, id, grace)
	if err != nil {
		return err
	}
	now := h.svc.Now()
	out := fleetwire.NewAPIKey{APIKey: toAPIKey(nk.Key, now), Key: nk.Secret}
	if old, err := h.svc.Key(c.r.Context(), c.p, id); err == nil {
		prev := toAPIKey(old, now)
		out.PreviousKey = &prev
	}
	return c.ok(http.StatusCreated, out)
}

func (h *Handler) keyUsage(c *call) error {
	q, err := c.query()
	if err != nil {
		return err
	}
	hours := 24
	if s := q.Get("hours"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fleet.Errorf(fleet.CodeInvalidRequest, "hours must be a whole number from 1 to %d.", fleet.MaxUsageHours)
		}
		hours = n
	}
	u, err := h.svc.KeyUsage(c.r.Context(), c.p, c.r.PathValue("key_id"), hours)
	if err != nil {
		return err
	}
	out := fleetwire.KeyUsage{KeyID: u.KeyID, Hours: make([]fleetwire.UsageHour, len(u.Hours))}
	for i, x := range u.Hours {
		out.Hours[i] = fleetwire.UsageHour{Hour: x.Hour, Requests: x.Requests, Rejected: x.Rejected}
	}
	out.Totals.Requests, out.Totals.Rejected = u.Requests, u.Rejected
	return c.ok(http.StatusOK, out)
}
