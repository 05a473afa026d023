package fleet

// AlertTx is the alerts area's part of a Tx: alert rules, geofences and
// alerts. Reads scoped by account return not_found for another
// account's resource, as the rest of Tx does.
type AlertTx interface {
	// CreateAlertRule stores a new rule. Returns conflict if the id exists.
	CreateAlertRule(r AlertRule) error
	// AlertRule returns not_found if the account has no such rule.
	AlertRule(accountID, id string) (AlertRule, error)
	// AlertRules returns the account's rules that f.Match, in id order,
	// after p.After, at most p.Limit of them.
	AlertRules(accountID string, f AlertRuleFilter, p Page) ([]AlertRule, error)
	// CountAlertRules returns how many rules the account has, enabled or not.
	CountAlertRules(accountID string) (int, error)
	// UpdateAlertRule replaces a stored rule (every field but ID, AccountID,
	// Type and CreatedAt). Returns not_found if the account has no such rule.
	UpdateAlertRule(r AlertRule) error
	// DeleteAlertRule returns not_found if the account has no such rule.
	DeleteAlertRule(accountID, id string) error
	// EnabledAlertRules returns the account's enabled rules in id order and
	// the geofences they name: what location ingest evaluates, in one read.
	EnabledAlertRules(accountID string) ([]AlertRule, []Geofence, error)
	// AlertConfigVersion returns the account's alert configuration version
	// (0 until the first BumpAlertConfig).
	AlertConfigVersion(accountID string) (int64, error)
	// BumpAlertConfig moves the account's alert configuration version
	// forward by one; the service calls it with every change of a rule or
	// geofence, in the change's transaction.
	BumpAlertConfig(accountID string) error
	// EnabledRulesOfType returns enabled rules of type t of any account, in
	// id order, after after, at most limit of them (the offline sweep).
	EnabledRulesOfType(t AlertType, after string, limit int) ([]AlertRule, error)

	// CreateGeofence stores a new geofence. Returns conflict if the id exists.
	CreateGeofence(g Geofence) error
	// Geofence returns not_found if the account has no such geofence.
	Geofence(accountID, id string) (Geofence, error)
	// Geofences returns the account's geofences in id order, after p.After,
	// at most p.Limit of them.
	Geofences(accountID string, p Page) ([]Geofence, error)
	// CountGeofences returns how many geofences the account has.
	CountGeofences(accountID string) (int, error)
	// UpdateGeofence replaces a stored geofence (name, geometry, radius,
	// updated_at). Returns not_found if the account has no such geofence.
	UpdateGeofence(g Geofence) error
	// DeleteGeofence returns not_found if the account has no such geofence.
	// Rules naming it are the service's to check first.
	DeleteGeofence(accountID, id string) error

	// CreateAlert stores a new alert. Returns conflict if the id exists.
	CreateAlert(a Alert) error
	// Alert returns not_found if the account has no such alert.
	Alert(accountID, id string) (Alert, error)
	// Alerts returns the account's alerts that f.Match, in id order, after
	// p.After, at most p.Limit of them; with p.Newest, in descending id
	// order, before p.After (see Page).
	Alerts(accountID string, f AlertFilter, p Page) ([]Alert, error)
	// UpdateAlert stores an alert's status, acknowledged_at and resolved_at.
	// Returns not_found if the account has no such alert.
	UpdateAlert(a Alert) error
	// LatestAlert returns the account's newest alert (highest id) whose Key
	// is key, whatever its status; not_found if there is none.
	LatestAlert(accountID, key string) (Alert, error)
}
