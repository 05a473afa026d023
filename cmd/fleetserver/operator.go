package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetpass"
	"github.com/fleetkit/fleetapi/fleetstore"
)

// The operator's commands: accounts and their keys, from the shell, on the
// store the server uses (they may run beside a running server).

func accountsCreateCommand() command {
	return command{
		name:    "accounts create",
		summary: "make an account and its first key",
		about: "Makes an account and its first API key, which holds every permission, and prints the key\n" +
			"(shown only now). --rate-limit gives the account its own hourly allowance per key: it can\n" +
			"only raise the plan's (" + byPlan(func(l fleet.PlanLimits) int { return l.RequestsPerHour }) + "), and raises the\n" +
			"account's location points per hour in proportion (" + byPlan(func(l fleet.PlanLimits) int { return l.PointsPerHour }) + ").",
		example: `fleetserver accounts create --company "Acme Haulage" --plan pro --json`,
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			company := f.fs.String("company", "", "the company's `NAME` (required)")
			plan := f.fs.String("plan", string(fleet.PlanFree), "the `PLAN`: free, pro or enterprise")
			limit := f.fs.Int("rate-limit", 0, "the account's own hourly allowance per key, `N` above the plan's (0: the plan's)")
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, `print {"account_id", "company_name", "plan", "key_id", "api_key"}`)
			f.require("company")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("accounts create", args); err != nil {
					return err
				}
				var a fleet.Account
				var nk fleet.NewKey
				err := withOperator(ctx, *dsn, true, func(op fleet.Operator) (err error) {
					a, nk, err = op.CreateAccount(ctx, fleet.AccountParams{CompanyName: *company, Plan: fleet.Plan(*plan), RateLimitPerHour: *limit})
					return describe(err, map[string]string{"company_name": "company", "plan": "plan", "rate_limit_per_hour": "rate-limit"})
				})
				if err != nil {
					return err
				}
				if *asJSON {
					return json.NewEncoder(c.stdout).Encode(map[string]string{
						"account_id": a.ID, "company_name": a.CompanyName, "plan": string(a.Plan), "key_id": nk.Key.ID, "api_key": nk.Secret,
					})
				}
				fmt.Fprintf(c.stdout, "account %s (%s, %s plan, %d requests per hour per key)\nkey %s with every permission: %s\n(the key is shown only now)\n",
					a.ID, a.CompanyName, a.Plan, a.RateLimitPerHour(), nk.Key.ID, nk.Secret)
				return nil
			}
		},
	}
}

func accountsListCommand() command {
	return command{
		name:    "accounts list",
		summary: "list every account",
		about:   "Lists every account of the store, oldest first.",
		example: "fleetserver accounts list --db sqlite:fleet.db",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, "print a JSON array of accounts")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("accounts list", args); err != nil {
					return err
				}
				var all []fleet.Account
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) error {
					var err error
					all, err = walk(func(q fleet.ListQuery) (fleet.List[fleet.Account], error) { return op.Accounts(ctx, q) })
					return err
				})
				if err != nil {
					return err
				}
				if *asJSON {
					out := make([]map[string]any, len(all))
					for i, a := range all {
						out[i] = map[string]any{"account_id": a.ID, "company_name": a.CompanyName, "plan": a.Plan,
							"rate_limit_per_hour": a.RateLimitPerHour(), "created_at": a.CreatedAt}
					}
					return writeJSON(c.stdout, out)
				}
				tw := table(c.stdout, "ACCOUNT", "COMPANY", "PLAN", "REQUESTS/HOUR", "CREATED")
				for _, a := range all {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", a.ID, a.CompanyName, a.Plan, a.RateLimitPerHour(), a.CreatedAt.Format(time.DateOnly))
				}
				return tw.Flush()
			}
		},
	}
}

func keysCreateCommand() command {
	return command{
		name:    "keys create",
		summary: "give an account another key",
		about: "Makes an API key of an account and prints it (shown only now). The account's plan caps its\n" +
			"active keys (free 10, pro 100, enterprise 1,000).",
		example: "fleetserver keys create --account acc_... --name \"Gateway A\" --permissions locations:write --json",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			account := f.fs.String("account", "", "the account's id, `ACC_ID` (acc_...; required)")
			name := f.fs.String("name", "", "the key's `NAME`, to recognise it by (required)")
			perms := f.fs.String("permissions", fleet.PermAll, "comma-separated `PERMISSIONS`, e.g. locations:write,vehicles:read")
			env := f.fs.String("environment", "production", "a free label, `ENV`, e.g. production or development")
			expires := f.fs.String("expires-at", "", "when the key stops working, an RFC 3339 `TIME` (none when empty)")
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, `print {"key_id", "api_key", "permissions"}`)
			f.require("account", "name")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("keys create", args); err != nil {
					return err
				}
				var list []string
				for _, p := range strings.Split(*perms, ",") {
					if p = strings.TrimSpace(p); p != "" {
						list = append(list, p)
					}
				}
				params := fleet.KeyParams{Name: *name, Permissions: list, Environment: *env}
				if *expires != "" {
					t, err := time.Parse(time.RFC3339, *expires)
					if err != nil {
						return usagef("keys create", "--expires-at must be an RFC 3339 time (2027-02-20T00:00:00Z), not %q", *expires)
					}
					params.ExpiresAt = &t
				}
				var nk fleet.NewKey
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) (err error) {
					nk, err = op.CreateKey(ctx, *account, params)
					return describe(err, map[string]string{"name": "name", "permissions": "permissions", "environment": "environment", "expires_at": "expires-at"})
				})
				if err != nil {
					return err
				}
				if *asJSON {
					return json.NewEncoder(c.stdout).Encode(map[string]any{"key_id": nk.Key.ID, "api_key": nk.Secret, "permissions": nk.Key.Permissions})
				}
				fmt.Fprintf(c.stdout, "key %s (%s): %s\n(the key is shown only now)\n", nk.Key.ID, strings.Join(nk.Key.Permissions, ","), nk.Secret)
				return nil
			}
		},
	}
}

func keysListCommand() command {
	return command{
		name:    "keys list",
		summary: "list an account's keys",
		about:   "Lists an account's API keys, oldest first, with their status. Secrets are never shown.",
		example: "fleetserver keys list --account acc_...",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			account := f.fs.String("account", "", "the account's id, `ACC_ID` (acc_...; required)")
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, "print a JSON array of keys")
			f.require("account")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("keys list", args); err != nil {
					return err
				}
				var keys []fleet.Key
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) error {
					var err error
					keys, err = walk(func(q fleet.ListQuery) (fleet.List[fleet.Key], error) { return op.Keys(ctx, *account, q) })
					return describe(err, nil)
				})
				if err != nil {
					return err
				}
				now := time.Now()
				if *asJSON {
					out := make([]map[string]any, len(keys))
					for i, k := range keys {
						out[i] = keyJSON(k, now)
					}
					return writeJSON(c.stdout, out)
				}
				tw := table(c.stdout, "KEY", "NAME", "PREFIX", "PERMISSIONS", "ENVIRONMENT", "STATUS", "CREATED", "LAST USED", "EXPIRES")
				for _, k := range keys {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, strings.Join(k.Permissions, ","),
						k.Environment, k.Status(now), k.CreatedAt.Format(time.DateOnly), orDash(k.LastUsedAt), orDash(k.ExpiresAt))
				}
				return tw.Flush()
			}
		},
	}
}

func keysRevokeCommand() command {
	return command{
		name:    "keys revoke",
		args:    "KEY_ID",
		summary: "revoke a key by its id",
		about: "Revokes an API key of any account by its id: servers sharing the store refuse it within\n" +
			"5 seconds, and its live streams end. Revoking a revoked key changes nothing.",
		example: "fleetserver keys revoke key_06h03dn3jnwe92ypfndrk8g3hm",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, "print the key as JSON")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("keys revoke", "keys revoke takes one key id (key_...)")
				}
				var k fleet.Key
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) (err error) {
					k, err = op.RevokeKey(ctx, args[0])
					return describe(err, nil)
				})
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(c.stdout, keyJSON(k, time.Now()))
				}
				fmt.Fprintf(c.stdout, "key %s (%s) of account %s is revoked since %s\n", k.ID, k.Name, k.AccountID, k.RevokedAt.Format(time.RFC3339))
				return nil
			}
		},
	}
}

// withOperator runs fn with the operator's use cases over the store dsn
// names, then closes it. Unless create, a SQLite file must exist already:
// reading or changing accounts of a store that is not there is a mistake,
// not a reason to make an empty one.
func withOperator(ctx context.Context, dsn string, create bool, fn func(fleet.Operator) error) error {
	if !create {
		if err := mustExist(dsn); err != nil {
			return err
		}
	}
	store, err := fleetstore.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer store.Close()
	return fn(fleet.NewService(store, fleet.Options{Passwords: fleetpass.Argon2id()}).Operator())
}

// mustExist refuses a sqlite: DSN whose file is not there.
func mustExist(dsn string) error {
	path, ok := strings.CutPrefix(dsn, "sqlite:")
	if !ok {
		return nil
	}
	path, _, _ = strings.Cut(path, "?")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no store at %s: the file %s does not exist", dsn, path)
	}
	return nil
}

// walk reads every page of a list.
func walk[T any](page func(fleet.ListQuery) (fleet.List[T], error)) ([]T, error) {
	var all []T
	q := fleet.ListQuery{Limit: fleet.MaxPageLimit}
	for {
		l, err := page(q)
		if err != nil {
			return nil, err
		}
		all = append(all, l.Items...)
		if !l.HasMore {
			return all, nil
		}
		q.Cursor = l.NextCursor
	}
}

func keyJSON(k fleet.Key, now time.Time) map[string]any {
	return map[string]any{"key_id": k.ID, "account_id": k.AccountID, "name": k.Name, "prefix": k.Prefix,
		"permissions": k.Permissions, "environment": k.Environment, "status": k.Status(now), "created_at": k.CreatedAt,
		"last_used_at": k.LastUsedAt, "expires_at": k.ExpiresAt, "revoked_at": k.RevokedAt}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer, heads ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(heads, "\t"))
	return tw
}

func orDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.DateOnly)
}

func noArgs(cmd string, args []string) error {
	if len(args) > 0 {
		return usagef(cmd, "%s takes no arguments, got %q", cmd, args[0])
	}
	return nil
}

// byPlan lists a limit of each plan, from the plan table: "free 1,000, pro
// 10,000, enterprise 100,000".
func byPlan(limit func(fleet.PlanLimits) int) string {
	var parts []string
	for _, p := range fleet.Plans() {
		n := strconv.Itoa(limit(p.Limits()))
		for i := len(n) - 3; i > 0; i -= 3 {
			n = n[:i] + "," + n[i:]
		}
		parts = append(parts, string(p)+" "+n)
	}
	return strings.Join(parts, ", ")
}
