package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetpass"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/matryer/is"
)

var linkRE = regexp.MustCompile(`https://fleet\.example\.com/welcome\?token=([A-Za-z0-9_-]{43})`)

// users list, link and remove on the store a server uses: people listed
// with whether they set a password, a new link that replaces the old one
// and signs in once, a removal that ends the person, and the account's
// only admin kept.
func TestUsersListLinkRemove(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	env := map[string]string{"FLEET_DB": dsn}
	acc := accountForUsers(t, env)
	_, err := cmdRun(env, "users", "create", "--account", acc["account_id"], "--email", "ada@acme.test", "--role", "admin", "--password-stdin")
	is.NoErr(err)
	out, err := cmdRun(env, "users", "create", "--account", acc["account_id"], "--email", "viv@acme.test", "--name", "Viv", "--json",
		"--url", "https://fleet.example.com")
	is.NoErr(err)
	var viv map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &viv))
	is.Equal(viv["role"], "viewer")
	is.Equal(viv["password_set"], false)
	first := linkRE.FindStringSubmatch(viv["sign_in_link"].(string))
	is.True(first != nil)

	// The list, as a table and as JSON.
	out, err = cmdRun(env, "users", "list", "--account", acc["account_id"])
	is.NoErr(err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	is.Equal(len(lines), 3) // a header and two people, oldest first
	is.True(strings.HasPrefix(lines[0], "USER"))
	is.True(strings.Contains(lines[1], "ada@acme.test") && strings.Contains(lines[1], "admin") && strings.HasSuffix(lines[1], " set"))
	is.True(strings.Contains(lines[2], "viv@acme.test") && strings.Contains(lines[2], "Viv") && strings.HasSuffix(lines[2], "not set"))
	is.True(!strings.Contains(out, "argon2"))
	out, err = cmdRun(env, "users", "list", "--account", acc["account_id"], "--json")
	is.NoErr(err)
	var list []map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &list))
	is.Equal(len(list), 2)
	is.Equal(list[1]["user_id"], viv["user_id"])
	_, err = cmdRun(env, "users", "list", "--account", "acc_missing")
	is.True(err != nil)

	// A new link, by e-mail address: the first stops working, the new
	// one works once.
	out, err = cmdRun(env, "users", "link", "VIV@acme.test", "--url", "https://fleet.example.com/")
	is.NoErr(err)
	second := linkRE.FindStringSubmatch(out)
	is.True(second != nil && second[1] != first[1])
	is.True(strings.Contains(out, "shown only now"))
	store, err := fleetstore.Open(ctx, dsn)
	is.NoErr(err)
	svc := fleet.NewService(store, fleet.Options{Passwords: fleetpass.Argon2id()}) // as the server's
	ada, err := svc.Operator().UserByEmail(ctx, "ada@acme.test")
	is.NoErr(err)
	is.True(strings.HasPrefix(ada.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$")) // the server's people have Argon2id hashes
	_, err = svc.SignInLinkUser(ctx, first[1])
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	u, err := svc.SignInLinkUser(ctx, second[1])
	is.NoErr(err)
	is.Equal(u.Email, "viv@acme.test")
	_, secret, err := svc.SignInWithLink(ctx, second[1], "viv-chooses-a-password")
	is.NoErr(err)
	is.NoErr(store.Close())

	// The only admin stays; the viewer goes, by id, and is signed out.
	_, err = cmdRun(env, "users", "remove", "ada@acme.test")
	is.True(err != nil && strings.Contains(err.Error(), "only admin"))
	out, err = cmdRun(env, "users", "remove", viv["user_id"].(string), "--json")
	is.NoErr(err)
	var gone map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &gone))
	is.Equal(gone["email"], "viv@acme.test")
	is.Equal(gone["removed"], true)
	store, err = fleetstore.Open(ctx, dsn)
	is.NoErr(err)
	defer store.Close()
	svc = fleet.NewService(store, fleet.Options{})
	_, err = svc.Session(ctx, secret)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	out, err = cmdRun(env, "users", "list", "--account", acc["account_id"], "--json")
	is.NoErr(err)
	is.NoErr(json.Unmarshal([]byte(out), &list))
	is.Equal(len(list), 1)

	// Mistakes: nobody, no one named, two named.
	_, err = cmdRun(env, "users", "remove", "nobody@acme.test")
	is.True(err != nil && strings.Contains(err.Error(), "no person has the e-mail address nobody@acme.test"))
	_, err = cmdRun(env, "users", "link", "usr_missing")
	is.Equal(err.Error(), `No user with id "usr_missing".`)
	_, err = cmdRun(env, "users", "remove")
	var ue *usageError
	is.True(errors.As(err, &ue) && ue.cmd == "users remove")
	_, err = cmdRun(env, "users", "link", "a@acme.test", "b@acme.test")
	is.True(errors.As(err, &ue) && ue.cmd == "users link")
}
