// Package dashboardtest holds the dashboard's browser tests: the API
// (fleethttp) and the dashboard (fleetweb) served together as fleetserver
// serves them, driven by a real headless Chromium through
// github.com/chromedp/chromedp. Without a browser the tests skip, saying so.
//
//	go test ./internal/dashboardtest                      # the tests
//	FLEET_SCREENSHOTS=1 go test ./internal/dashboardtest  # also refresh docs/screenshots
//
// The browser is chromium (Debian's package) on PATH or /usr/bin/chromium,
// or the one FLEET_CHROMIUM names. With FLEET_REQUIRE_BROWSER set (as CI
// sets it), a missing browser fails the tests instead.
package dashboardtest
