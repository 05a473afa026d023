package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// apiCall makes an API request and returns its status and data.
func apiCall(t *testing.T, method, url, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m struct {
		Data  map[string]any `json:"data"`
		Error map[string]any `json:"error"`
	}
	json.NewDecoder(res.Body).Decode(&m)
	if m.Data == nil {
		m.Data = m.Error
	}
	return res.StatusCode, m.Data
}

// mode returns a file's permission bits.
func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// holdsNone fails if any of the files holds a secret or the first 12
// characters of its random part.
func holdsNone(t *testing.T, secrets []string, files ...string) {
	t.Helper()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(raw, []byte(s)) || bytes.Contains(raw, []byte(strings.TrimPrefix(s, "whsec_")[:12])) {
				t.Fatalf("%s holds the secret %s... in plain text", filepath.Base(f), s[:10])
			}
		}
	}
}

// A SQLite store's files are its owner's alone, and a copy of them reveals
// no webhook signing secret: the server makes the database, its -wal and
// -shm files and its key file (fleet.db.key) 0600, and warns about an
// existing file that others may read; a secret an earlier version kept in
// plain text is sealed at start; a backup is 0600 and holds only sealed
// secrets; after a restart every secret still signs deliveries that the
// secrets the API returned verify; and the database started beside another
// key file is refused, naming --secrets-key-file, without leaving a key
// file behind.
func TestServeSealsWebhookSecretsOnSQLite(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old := syscall.Umask(0o022) // what most systems have: files the server makes are 0600 whatever it is
	defer syscall.Umask(old)
	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")

	// An earlier version: no keys, a webhook's secret in plain text, and
	// a database file others may read.
	store, err := sqlstore.Open(ctx, "sqlite:"+db)
	is.NoErr(err)
	plainSvc := fleet.NewService(store, fleet.Options{Webhooks: fleet.WebhookOptions{Insecure: true}})
	acc, nk, err := plainSvc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	rcv := newRecorder(t)
	legacy, err := plainSvc.CreateWebhook(ctx, fleet.SystemPrincipal(acc), fleet.Webhook{URL: rcv.URL + "/legacy", Events: []string{"webhook.test"}, Enabled: true})
	is.NoErr(err)
	is.NoErr(store.Close())
	is.Equal(mode(t, db), os.FileMode(0o600)) // made by the store, owner only
	is.NoErr(os.Chmod(db, 0o644))

	env := map[string]string{"FLEET_DB": "sqlite:" + db}
	s := start(t, env, "--insecure-webhooks")
	s.stderr.waitFor(t, regexp.MustCompile(`(readable or writable by others).*fleet\.db`))
	s.stderr.waitFor(t, regexp.MustCompile(`(sealed webhook signing secrets)" sealed=1`))
	s.stderr.waitFor(t, regexp.MustCompile(`(made the key file)`))
	is.Equal(mode(t, db+".key"), os.FileMode(0o600))
	is.Equal(mode(t, db+"-wal"), os.FileMode(0o644)) // SQLite gives them the database file's mode...
	is.NoErr(s.stop())

	is.NoErr(os.Chmod(db, 0o600)) // (SQLite removed -wal and -shm as the server closed the store)
	s = start(t, env, "--insecure-webhooks")
	is.True(!strings.Contains(s.stderr.String(), "readable or writable by others"))
	status, wh := apiCall(t, "POST", s.base+"/v1/webhooks", nk.Secret, map[string]any{"url": rcv.URL + "/new", "events": []string{"webhook.test"}})
	is.Equal(status, http.StatusCreated)
	id, created := wh["webhook_id"].(string), wh["secret"].(string)
	status, rot := apiCall(t, "POST", s.base+"/v1/webhooks/"+id+"/rotate_secret", nk.Secret, nil)
	is.Equal(status, http.StatusOK)
	rotated := rot["secret"].(string)
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		is.Equal(mode(t, f), os.FileMode(0o600)) // ...so these are the owner's alone too
	}
	secrets := []string{legacy.Secret, created, rotated}
	holdsNone(t, secrets, db, db+"-wal")

	// A backup: the owner's alone, with only sealed secrets.
	backup := filepath.Join(t.TempDir(), "copy.db")
	_, err = cmdRun(nil, "backup", "--db", "sqlite:"+db, "--to", backup)
	is.NoErr(err)
	is.Equal(mode(t, backup), os.FileMode(0o600))
	holdsNone(t, secrets, backup)
	raw, err := os.ReadFile(backup)
	is.NoErr(err)
	is.Equal(bytes.Count(raw, []byte("sealed:v1:")), 3)
	is.NoErr(s.stop())
	holdsNone(t, secrets, db, db+"-wal")

	// After a restart, every secret still signs.
	s = start(t, env, "--insecure-webhooks")
	for _, hook := range []struct {
		id      string
		secrets []string
	}{{legacy.ID, []string{legacy.Secret}}, {id, []string{created, rotated}}} {
		status, _ := apiCall(t, "POST", s.base+"/v1/webhooks/"+hook.id+"/test", nk.Secret, map[string]any{})
		is.Equal(status, http.StatusAccepted)
		got := rcv.next(t)
		for _, sec := range hook.secrets {
			is.NoErr(fleet.VerifyWebhook(sec, got.Header.Get("webhook-id"), got.Header.Get("webhook-timestamp"), got.Header.Get("webhook-signature"), got.body, time.Now()))
		}
	}
	is.NoErr(s.stop())

	// The copy beside a key file of its own does not open; given the
	// database's key file, it does.
	_, err = cmdRun(map[string]string{"FLEET_DB": "sqlite:" + backup}, "serve", "--addr", "127.0.0.1:0")
	is.True(err != nil && strings.Contains(err.Error(), "--secrets-key-file"))
	_, err = os.Stat(backup + ".key")
	is.True(os.IsNotExist(err)) // no stray key file
	s = start(t, map[string]string{"FLEET_DB": "sqlite:" + backup, "FLEET_SECRETS_KEY_FILE": db + ".key"})
	is.NoErr(s.stop())
}

// On PostgreSQL the servers sharing a database must share a key, which
// only their operator can give them: without --secrets-key-file a server
// starts while no webhook exists but registers none (503, saying why), and
// once one exists it refuses to start, naming the flag.
func TestServeOnPostgresNeedsASecretsKeyFile(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.NewDSN(t)
	env := map[string]string{"FLEET_DB": dsn}
	out, err := cmdRun(env, "accounts", "create", "--company", "Acme", "--plan", "pro", "--json")
	is.NoErr(err)
	var acc map[string]string
	is.NoErr(json.Unmarshal([]byte(out), &acc))

	s := start(t, env, "--insecure-webhooks")
	status, body := apiCall(t, "POST", s.base+"/v1/webhooks", acc["api_key"], map[string]any{"url": "http://127.0.0.1:9/hook"})
	is.Equal(status, http.StatusServiceUnavailable)
	is.True(strings.Contains(body["message"].(string), "no key to seal"))
	is.NoErr(s.stop())

	keyFile := filepath.Join(t.TempDir(), "secrets.key")
	is.NoErr(os.WriteFile(keyFile, []byte(fleet.NewSecretKey()+"\n"), 0o600))
	s = start(t, env, "--insecure-webhooks", "--secrets-key-file", keyFile)
	status, body = apiCall(t, "POST", s.base+"/v1/webhooks", acc["api_key"], map[string]any{"url": "http://127.0.0.1:9/hook"})
	is.Equal(status, http.StatusCreated)
	secret := body["secret"].(string)
	is.NoErr(s.stop())

	_, err = cmdRun(env, "serve", "--addr", "127.0.0.1:0")
	is.True(err != nil && strings.Contains(err.Error(), "1 webhook endpoints exist") && strings.Contains(err.Error(), "--secrets-key-file"))
	env["FLEET_SECRETS_KEY_FILE"] = keyFile
	s = start(t, env)
	is.NoErr(s.stop())

	// The row, read directly, holds the secret sealed.
	got := storedSecret(t, dsn, body["webhook_id"].(string))
	is.True(strings.HasPrefix(got, "sealed:v1:"))
	is.True(!strings.Contains(got, strings.TrimPrefix(secret, "whsec_")[:12]))
}

func storedSecret(t *testing.T, dsn, id string) string {
	t.Helper()
	store, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var w fleet.Webhook
	err = store.View(context.Background(), func(tx fleet.Tx) error {
		ws, err := tx.WebhooksByID([]string{id})
		if len(ws) == 1 {
			w = ws[0]
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return w.Secret
}

type recorded struct {
	http.Header
	body []byte
}

// recorder is a webhook receiver that hands over what it gets.
type recorder struct {
	*httptest.Server
	got chan recorded
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{got: make(chan recorded, 16)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.got <- recorded{req.Header.Clone(), b}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) next(t *testing.T) recorded {
	t.Helper()
	select {
	case g := <-r.got:
		return g
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery")
		return recorded{}
	}
}
