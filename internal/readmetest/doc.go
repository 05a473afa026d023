// Package readmetest runs the documentation's walkthroughs as tests: the API
// tour (docs/api-tour.md, "A first session with curl" down to "Alerts") and
// the README's two commands and five-minute tour. Each has a session script
// beside it (docs/api-tour.session.txtar, docs/readme-tour.session.txtar)
// that holds the same shell commands as steps of a testscript, with a check
// of each documented output; TestSessions runs them, and TestSessionsInSync
// keeps each document and its script in step (Walkthroughs lists them).
package readmetest
