package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/sim"
)

// The demo: an enterprise account with a simulated fleet that reports
// through the service, and alert rules the fleet breaks.
const (
	demoCompany  = "Demo Logistics"
	demoKeyName  = "Demo key"
	demoVehicles = 25
	demoEvery    = 2 * time.Second
)

// seedDemo starts the demo and prints its key and curl lines. A store that
// has the demo account already (an earlier --demo run on the same file) keeps
// it: the account gets a new key, the keys of earlier runs are revoked (they
// were printed to a terminal), and the same vehicles move again.
func seedDemo(ctx context.Context, svc *fleet.Service, base string, stdout io.Writer) error {
	op := svc.Operator()
	a, found, err := findDemo(ctx, op)
	if err != nil {
		return fmt.Errorf("find the demo account: %w", err)
	}
	var secret string
	if found {
		old, err := walk(func(q fleet.ListQuery) (fleet.List[fleet.Key], error) { return op.Keys(ctx, a.ID, q) })
		if err != nil {
			return fmt.Errorf("read the demo's keys: %w", err)
		}
		for _, k := range old {
			if k.Status(svc.Now()) == fleet.KeyActive {
				if _, err := op.RevokeKey(ctx, k.ID); err != nil {
					return fmt.Errorf("revoke the demo's old key: %w", err)
				}
			}
		}
		nk, err := op.CreateKey(ctx, a.ID, fleet.KeyParams{Name: demoKeyName})
		if err != nil {
			return fmt.Errorf("make the demo's key: %w", err)
		}
		secret = nk.Secret
	} else {
		var nk fleet.NewKey
		a, nk, err = op.CreateAccount(ctx, fleet.AccountParams{CompanyName: demoCompany, Plan: fleet.PlanEnterprise})
		if err != nil {
			return fmt.Errorf("seed the demo account: %w", err)
		}
		secret = nk.Secret
	}
	p := fleet.SystemPrincipal(a)
	seed := uint64(svc.Now().UnixNano())
	var f *sim.Fleet
	if found {
		f, err = sim.Resume(ctx, svc, p, demoVehicles, seed)
	} else {
		f, err = sim.New(ctx, svc, p, demoVehicles, seed)
		if err == nil {
			err = seedDemoAlerts(ctx, svc, p)
		}
		if err == nil {
			err = seedDemoDrivers(ctx, svc, p)
		}
	}
	if err != nil {
		return fmt.Errorf("seed the demo fleet: %w", err)
	}
	if err := f.Step(ctx, svc.Now(), demoEvery); err != nil { // positions from the first second
		return fmt.Errorf("seed the demo fleet: %w", err)
	}
	go f.Run(ctx, demoEvery)
	password, err := seedDemoUser(ctx, svc, a)
	if err != nil {
		return fmt.Errorf("seed the demo user: %w", err)
	}
	if err := seedDemoNotifications(ctx, svc, p); err != nil {
		return fmt.Errorf("seed the demo's notification rule: %w", err)
	}
	again := ""
	if found {
		again = " (the one of an earlier --demo run on this store: its vehicles move again, and its earlier keys are revoked)"
	}
	fmt.Fprintf(stdout, "Demo account %s%s, enterprise plan, %d vehicles reporting every %s\n"+
		"API key (shown once): %s\nTry:\n  curl -s -H 'Authorization: Bearer %s' %s/v1/account\n"+
		"  curl -s -H 'Authorization: Bearer %s' %s/v1/vehicles/locations\n"+
		"  curl -N -H 'Authorization: Bearer %s' %s/v1/vehicles/locations/stream\n"+
		"  curl -s -H 'Authorization: Bearer %s' '%s/v1/alerts?status=open'\n\n",
		a.ID, again, len(f.VehicleIDs()), demoEvery, secret, secret, base, secret, base, secret, base, secret, base)
	fmt.Fprintf(stdout, "Dashboard: %s/ — sign in as %s with the password %s (new each run)\n\n", base, demoEmail, password)
	return nil
}

// demoEmail is the demo account's admin in the dashboard.
const demoEmail = "demo@example.com"

// seedDemoUser makes the demo account's admin, or gives the one of an
// earlier run a new password (the old one was printed to a terminal), and
// returns the password.
func seedDemoUser(ctx context.Context, svc *fleet.Service, a fleet.Account) (string, error) {
	password := "demo-" + fleet.NewSecret()[len(fleet.SecretPrefix):][:20]
	op := svc.Operator()
	u, err := op.UserByEmail(ctx, demoEmail)
	switch {
	case fleet.ErrorCode(err) == fleet.CodeNotFound:
		_, _, err = op.CreateUser(ctx, a.ID, fleet.UserParams{Email: demoEmail, Name: "Demo admin", Role: fleet.RoleAdmin}, password)
		return password, err
	case err != nil:
		return "", err
	case u.AccountID != a.ID:
		return "", fmt.Errorf("%s belongs to another account than the demo's", demoEmail)
	}
	_, err = op.SetPassword(ctx, demoEmail, password)
	return password, err
}

// findDemo returns the demo account of an earlier run, if the store has one.
func findDemo(ctx context.Context, op fleet.Operator) (fleet.Account, bool, error) {
	all, err := walk(func(q fleet.ListQuery) (fleet.List[fleet.Account], error) { return op.Accounts(ctx, q) })
	if err != nil {
		return fleet.Account{}, false, err
	}
	for _, a := range all {
		if a.CompanyName == demoCompany && a.Plan == fleet.PlanEnterprise {
			return a, true, nil
		}
	}
	return fleet.Account{}, false, nil
}

// seedDemoAlerts gives the demo account rules that the simulated fleet
// breaks within minutes: speeding above 70 km/h, and entering or leaving
// a 4 km circle around Berlin's centre.
func seedDemoAlerts(ctx context.Context, svc *fleet.Service, p fleet.Principal) error {
	limit, radius := 70.0, 4000.0
	if _, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertSpeeding, Severity: fleet.SeverityWarning, ThresholdKmh: &limit}, nil); err != nil {
		return err
	}
	g, err := svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "Berlin centre",
		Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13.405, 52.52}}, RadiusM: &radius})
	if err != nil {
		return err
	}
	for _, t := range []fleet.AlertType{fleet.AlertGeofenceEnter, fleet.AlertGeofenceExit} {
		if _, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: t, Severity: fleet.SeverityInfo, GeofenceID: g.ID}, nil); err != nil {
			return err
		}
	}
	return nil
}

// demoDrivers are the demo's drivers; the first vehicles' trackers read
// their keys (sim.DriverKey), so those vehicles show who drives them.
var demoDrivers = []string{"Ana Lima", "Jonas Weber", "Mia Schmidt", "Luca Rossi", "Sara Novak"}

// seedDemoDrivers adds the demo's drivers, each with the key one of the
// simulated vehicles' trackers reads.
func seedDemoDrivers(ctx context.Context, svc *fleet.Service, p fleet.Principal) error {
	for i, name := range demoDrivers {
		if _, err := svc.CreateDriver(ctx, p, fleet.Driver{Name: name, Identifier: sim.DriverKey(i)}); err != nil {
			return err
		}
	}
	return nil
}

// seedDemoNotifications gives the demo admin a notification rule of the
// alerts (unless an earlier run did): the first of a burst is e-mailed at
// once, the rest come as a digest every 5 minutes, printed or sent to the
// local SMTP server as the server's banner says.
func seedDemoNotifications(ctx context.Context, svc *fleet.Service, p fleet.Principal) error {
	u, err := svc.Operator().UserByEmail(ctx, demoEmail)
	if err != nil {
		return err
	}
	l, err := svc.ListNotificationRules(ctx, p, u.ID, fleet.ListQuery{Limit: 1})
	if err != nil || len(l.Items) > 0 {
		return err
	}
	_, err = svc.CreateNotificationRule(ctx, p, fleet.NotificationRuleInput{UserID: u.ID, Events: []string{fleet.EventAlertCreated}})
	return err
}
