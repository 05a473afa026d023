// Package readmetest runs the README's walkthrough, "A first session with
// curl" down to "Alerts", as a test: README.session.txtar, beside the
// README, holds the same shell commands as steps of a testscript, with a
// check of each documented output, and a second test keeps the README and
// the script in step. The package has no code of its own; see its tests.
package readmetest
