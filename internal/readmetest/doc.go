// Package readmetest runs the documentation's walkthroughs as tests: the API
// tour (docs/api-tour.md, "A first session with curl" down to "Alerts") has a
// session script beside it (docs/api-tour.session.txtar) that holds the same
// shell commands as steps of a testscript, with a check of each documented
// output; TestSessions runs it, and TestSessionsInSync keeps the document and
// its script in step (Walkthroughs lists them).
package readmetest
