package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
)

// stdin is where `users create --password-stdin` reads the password.
var stdin io.Reader = os.Stdin

func usersCreateCommand() command {
	return command{
		name:    "users create",
		summary: "add a person who signs in to the dashboard",
		about: "Adds a person to an account's dashboard, as admin (everything, users included) or viewer\n" +
			"(sees everything, changes nothing). With --password-stdin the password is the first line of\n" +
			"standard input (at least 12 characters, not a common one); otherwise a one-time sign-in link,\n" +
			"valid 24 hours, is printed once: whoever opens it sets the password. No e-mail is sent.",
		example: "fleetserver users create --account acc_... --email ada@example.com --role admin --url https://fleet.example.com",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			account := f.fs.String("account", "", "the account's id, `ACC_ID` (acc_...; required)")
			email := f.fs.String("email", "", "the person's e-mail `ADDRESS`, what they sign in with (required)")
			name := f.fs.String("name", "", "the person's `NAME` (optional)")
			role := f.fs.String("role", string(fleet.RoleViewer), "`ROLE`: admin or viewer")
			fromStdin := f.fs.Bool("password-stdin", false, "read the password from standard input instead of printing a sign-in link")
			base := f.fs.String("url", "http://127.0.0.1:8080", "the dashboard's `URL`, for the sign-in link")
			dsn := f.db()
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
				fmt.Fprintf(c.stdout, "user %s (%s, %s) added to account %s\n", u.ID, u.Email, u.Role, u.AccountID)
				if link != "" {
					fmt.Fprintf(c.stdout, "one-time sign-in link, valid 24 hours (shown only now):\n  %s\n",
						fleetweb.SignInLinkURL(strings.TrimRight(*base, "/"), link))
				}
				return nil
			}
		},
	}
}
