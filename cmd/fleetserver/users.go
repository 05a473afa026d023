package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
)

// stdin is where `users create --password-stdin` reads the password.
var stdin io.Reader = os.Stdin

func usersCreateCommand() command {
	return command{
		name:    "users create",
		summary: "add a person who signs in to the dashboard",
		about: "Adds a person to an account's dashboard, as admin (everything, users included), manager\n" +
			"(runs the fleet: everything but people, API keys and webhooks) or viewer (sees everything,\n" +
			"changes nothing). With --password-stdin the password is the first line of\n" +
			"standard input (at least 12 characters, not a common one); otherwise a one-time sign-in link,\n" +
			"valid 24 hours, is printed once: whoever opens it sets the password. No e-mail is sent.",
		example: "fleetserver users create --account acc_... --email ada@example.com --role admin --url https://fleet.example.com",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			account := f.fs.String("account", "", "the account's id, `ACC_ID` (acc_...; required)")
			email := f.fs.String("email", "", "the person's e-mail `ADDRESS`, what they sign in with (required)")
			name := f.fs.String("name", "", "the person's `NAME` (optional)")
			role := f.fs.String("role", string(fleet.RoleViewer), "`ROLE`: admin, manager or viewer")
			fromStdin := f.fs.Bool("password-stdin", false, "read the password from standard input instead of printing a sign-in link")
			base := linkURL(f)
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, `print the person as JSON, with "sign_in_link" and "expires_at" when a link was made`)
			f.require("account", "email")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("users create", args); err != nil {
					return err
				}
				password := ""
				if *fromStdin {
					line, err := bufio.NewReader(stdin).ReadString('\n')
					if err != nil && line == "" {
						return fmt.Errorf("read the password from standard input: %w", err)
					}
					password = strings.TrimRight(line, "\r\n")
					if password == "" {
						return usagef("users create", "--password-stdin: standard input has no password")
					}
				}
				var u fleet.User
				var link string
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) (err error) {
					u, link, err = op.CreateUser(ctx, *account, fleet.UserParams{Email: *email, Name: *name, Role: fleet.Role(*role)}, password)
					return describe(err, map[string]string{"email": "email", "name": "name", "role": "role", "password": "password-stdin"})
				})
				if err != nil {
					return err
				}
				if *asJSON {
					out := userJSON(u)
					if link != "" {
						out["sign_in_link"], out["expires_at"] = signInLink(*base, link), time.Now().Add(fleet.SignInLinkTTL).UTC()
					}
					return writeJSON(c.stdout, out)
				}
				fmt.Fprintf(c.stdout, "user %s (%s, %s) added to account %s\n", u.ID, u.Email, u.Role, u.AccountID)
				if link != "" {
					printLink(c.stdout, *base, link)
				}
				return nil
			}
		},
	}
}

func usersListCommand() command {
	return command{
		name:    "users list",
		summary: "list an account's people",
		about: "Lists the people of an account, oldest first: their id, e-mail address, name, role, when they\n" +
			"were added and last signed in, and whether they have set a password (someone who has not\n" +
			"yet opened their sign-in link has not). Passwords and links are never shown.",
		example: "fleetserver users list --account acc_...",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			account := f.fs.String("account", "", "the account's id, `ACC_ID` (acc_...; required)")
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, "print a JSON array of people")
			f.require("account")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("users list", args); err != nil {
					return err
				}
				var users []fleet.User
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) (err error) {
					users, err = walk(func(q fleet.ListQuery) (fleet.List[fleet.User], error) { return op.Users(ctx, *account, q) })
					return describe(err, nil)
				})
				if err != nil {
					return err
				}
				if *asJSON {
					out := make([]map[string]any, len(users))
					for i, u := range users {
						out[i] = userJSON(u)
					}
					return writeJSON(c.stdout, out)
				}
				tw := table(c.stdout, "USER", "E-MAIL", "NAME", "ROLE", "ADDED", "LAST SIGN-IN", "PASSWORD")
				for _, u := range users {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", u.ID, u.Email, orNone(u.Name), u.Role,
						u.CreatedAt.Format(time.DateOnly), orDash(u.LastLoginAt), passwordState(u))
				}
				return tw.Flush()
			}
		},
	}
}

func usersRemoveCommand() command {
	return command{
		name:    "users remove",
		args:    "USER",
		summary: "remove a person by id or e-mail address",
		about: "Removes a person, named by their id (usr_...) or e-mail address, from their account: their\n" +
			"sessions end and their sign-in links stop working at once. An account's only admin cannot\n" +
			"be removed: make another person admin first (in the dashboard, or with users create).",
		example: "fleetserver users remove ada@example.com",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, "print the person removed as JSON")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("users remove", "users remove takes one person: an id (usr_...) or an e-mail address")
				}
				var u fleet.User
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) error {
					id, err := userID(ctx, op, args[0])
					if err == nil {
						u, err = op.RemoveUser(ctx, id)
					}
					return describe(err, nil)
				})
				if err != nil {
					return err
				}
				if *asJSON {
					out := userJSON(u)
					out["removed"] = true
					return writeJSON(c.stdout, out)
				}
				fmt.Fprintf(c.stdout, "user %s (%s, %s) removed from account %s; their sessions have ended\n", u.ID, u.Email, u.Role, u.AccountID)
				return nil
			}
		},
	}
}

func usersLinkCommand() command {
	return command{
		name:    "users link",
		args:    "USER",
		summary: "make a new sign-in link for a person who forgot their password",
		about: "Makes a new one-time sign-in link, valid 24 hours, for a person who forgot their password\n" +
			"(or whose first link expired), named by their id (usr_...) or e-mail address, and prints it\n" +
			"once: whoever opens it sets a new password, and the person's other sessions then end.\n" +
			"Their earlier links stop working now; their password keeps working until the link is used.\n" +
			"No e-mail is sent: hand the link over yourself.",
		example: "fleetserver users link ada@example.com --url https://fleet.example.com",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			base := linkURL(f)
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, `print the person as JSON, with "sign_in_link" and "expires_at"`)
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("users link", "users link takes one person: an id (usr_...) or an e-mail address")
				}
				var u fleet.User
				var link string
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) error {
					id, err := userID(ctx, op, args[0])
					if err == nil {
						u, link, err = op.NewSignInLink(ctx, id)
					}
					return describe(err, nil)
				})
				if err != nil {
					return err
				}
				if *asJSON {
					out := userJSON(u)
					out["sign_in_link"], out["expires_at"] = signInLink(*base, link), time.Now().Add(fleet.SignInLinkTTL).UTC()
					return writeJSON(c.stdout, out)
				}
				fmt.Fprintf(c.stdout, "user %s (%s, %s) of account %s\n", u.ID, u.Email, u.Role, u.AccountID)
				printLink(c.stdout, *base, link)
				return nil
			}
		},
	}
}

// linkURL declares --url, the dashboard's address that sign-in links are
// made from.
func linkURL(f *flags) *string {
	return f.fs.String("url", "http://127.0.0.1:8080", "the dashboard's `URL`, for the sign-in link")
}

func signInLink(base, secret string) string {
	return fleetweb.SignInLinkURL(strings.TrimRight(base, "/"), secret)
}

func printLink(w io.Writer, base, secret string) {
	fmt.Fprintf(w, "one-time sign-in link, valid 24 hours (shown only now):\n  %s\n", signInLink(base, secret))
}

// userID reads a person as the command line names them: an id, or an
// e-mail address (of any account).
func userID(ctx context.Context, op fleet.Operator, s string) (string, error) {
	if !strings.Contains(s, "@") {
		return s, nil
	}
	u, err := op.UserByEmail(ctx, s)
	if fleet.ErrorCode(err) == fleet.CodeNotFound {
		return "", fmt.Errorf("no person has the e-mail address %s", fleet.NormaliseEmail(s))
	}
	return u.ID, err
}

func userJSON(u fleet.User) map[string]any {
	return map[string]any{"user_id": u.ID, "account_id": u.AccountID, "email": u.Email, "name": u.Name, "role": u.Role,
		"created_at": u.CreatedAt, "last_login_at": u.LastLoginAt, "password_set": u.PasswordHash != ""}
}

func passwordState(u fleet.User) string {
	if u.PasswordHash == "" {
		return "not set"
	}
	return "set"
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
