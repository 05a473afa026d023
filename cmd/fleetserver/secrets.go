package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// secretKeys returns how the server seals the signing secrets of webhook
// endpoints (see fleet.SecretKeys) for the store dsn names and the key file
// --secrets-key-file names (""), as fleet.WebhookOptions:
//
//   - a key file named: its keys; the file must exist.
//   - sqlite:PATH: the key file PATH.key beside the database, made (0600)
//     with a new key on first start.
//   - memory: a key of the process's own, gone with the store.
//   - PostgreSQL: none, and keys required: the servers sharing the
//     database must share a key, which only the operator can give them;
//     without it no webhook may be registered, and the start fails once
//     one exists (Operator.SealWebhookSecrets).
//
// made is the path of the key file it made, if it made one.
func secretKeys(dsn, keyFile string, log *slog.Logger) (_ fleet.WebhookOptions, made string, err error) {
	if keyFile != "" {
		keys, err := readKeyFile(keyFile, log)
		return fleet.WebhookOptions{SecretKeys: keys}, "", err
	}
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:") + ".key"
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			keys, err := readKeyFile(path, log)
			return fleet.WebhookOptions{SecretKeys: keys}, "", err
		}
		if err != nil {
			return fleet.WebhookOptions{}, "", fmt.Errorf("make the secrets key file: %w", err)
		}
		_, err = fmt.Fprintf(f, "# The keys that seal this database's webhook signing secrets, newest first.\n"+
			"# Back this file up apart from the database: neither alone reveals a secret.\n%s\n", fleet.NewSecretKey())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return fleet.WebhookOptions{}, "", fmt.Errorf("write the secrets key file: %w", err)
		}
		keys, err := readKeyFile(path, log)
		return fleet.WebhookOptions{SecretKeys: keys}, path, err
	case strings.HasPrefix(dsn, "memory"):
		keys, err := fleet.ParseSecretKeys([]byte(fleet.NewSecretKey()))
		return fleet.WebhookOptions{SecretKeys: keys}, "", err
	default:
		return fleet.WebhookOptions{RequireSecretKeys: true}, "", nil
	}
}

// readKeyFile reads a key file (see fleet.ParseSecretKeys), warning when
// others than its owner may read it.
func readKeyFile(path string, log *slog.Logger) (*fleet.SecretKeys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets-key-file: %w (make one with: (umask 077; head -c 32 /dev/urandom | base64 > %s))", err, path)
	}
	warnWideFiles(log, path)
	keys, err := fleet.ParseSecretKeys(b)
	if err != nil {
		return nil, fmt.Errorf("--secrets-key-file %s: %w", path, err)
	}
	return keys, nil
}

// warnWideFiles logs a warning for each file that exists and that others
// than its owner may read or write (a file the server makes is 0600; one
// made before, or by hand, may be wider).
func warnWideFiles(log *slog.Logger, paths ...string) {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if mode := fi.Mode().Perm(); mode&0o077 != 0 {
			log.Warn("a file of the store is readable or writable by others than its owner: chmod 600 it", "path", p, "mode", fmt.Sprintf("%04o", mode))
		}
	}
}

// sealSecrets runs the start's step that seals webhook secrets kept in
// plain text and seals again those an older key sealed (see
// fleet.Operator.SealWebhookSecrets), and warns about files of a SQLite
// store that others may read. made is the key file secretKeys made for
// this start, if any: it is removed again when the step fails before
// sealing anything with it (the database is another's, whose key file
// --secrets-key-file must name), and announced otherwise.
func sealSecrets(ctx context.Context, svc *fleet.Service, dsn, made string, log *slog.Logger) error {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		warnWideFiles(log, path, path+"-wal", path+"-shm")
	}
	n, err := svc.Operator().SealWebhookSecrets(ctx)
	if err != nil {
		if made != "" && n.Sealed+n.Resealed == 0 {
			os.Remove(made)
		}
		if fleet.ErrorCode(err) == fleet.CodeUnavailable && n.Endpoints > 0 {
			return fmt.Errorf("%d webhook endpoints exist and their signing secrets must be sealed: "+
				"start the server with --secrets-key-file PATH (or FLEET_SECRETS_KEY_FILE), the same file on every server sharing the database", n.Endpoints)
		}
		return fmt.Errorf("seal webhook signing secrets (does --secrets-key-file name this database's key file?): %w", err)
	}
	if made != "" {
		log.Info("made the key file that seals webhook signing secrets: back it up apart from the database", "path", made)
	}
	if n.Sealed+n.Resealed > 0 {
		log.Info("sealed webhook signing secrets", "sealed", n.Sealed, "resealed_under_the_newest_key", n.Resealed)
	}
	return nil
}
