// Package clientcheck holds the check that clients generated from the
// OpenAPI document compile and work (check.sh, which CI runs): calls.go,
// built only by that script beside a generated Go client, calls
// operations through it against a server on loopback.
package clientcheck
