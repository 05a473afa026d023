package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Times are stored as Unix microseconds (BIGINT) on both dialects: exact at
// the domain's precision (fleet.Timestamp) and read back in UTC.

func toDB(t time.Time) int64 { return t.UnixMicro() }

func fromDB(us int64) time.Time { return time.UnixMicro(us).UTC() }

func toNullDB(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// Optional text (an external id, a driver's identifier) is NULL when
// unset, so that a unique index ignores it.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func fromNullDB(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromDB(v.Int64)
	return &t
}

// Permissions are stored as a JSON array of strings.

func encodePermissions(ps fleet.Permissions) (string, error) {
	if ps == nil {
		ps = fleet.Permissions{}
	}
	b, err := json.Marshal([]string(ps))
	if err != nil {
		return "", fmt.Errorf("sqlstore: encode permissions: %w", err)
	}
	return string(b), nil
}

func decodePermissions(b []byte) (fleet.Permissions, error) {
	var ps []string
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("sqlstore: decode permissions: %w", err)
	}
	return fleet.Permissions(ps), nil
}

func hashFromDB(b []byte) ([32]byte, error) {
	var h [32]byte
	if len(b) != len(h) {
		return h, fmt.Errorf("sqlstore: stored hash has %d bytes, want %d", len(b), len(h))
	}
	copy(h[:], b)
	return h, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// queryAll runs query (with ? placeholders) and reads every row with scan:
// the list reads of most tables. doing names the read in its error.
func queryAll[T any](t *tx, doing string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := t.query(t.d.q(query), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, v)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

const accountColumns = `a.id, a.company_name, a.plan, a.rate_limit_override, a.created_at`

func scanAccount(r scanner) (fleet.Account, error) {
	var a fleet.Account
	var plan string
	var override, created int64
	if err := r.Scan(&a.ID, &a.CompanyName, &plan, &override, &created); err != nil {
		return fleet.Account{}, err
	}
	a.Plan, a.RateLimitOverride, a.CreatedAt = fleet.Plan(plan), int(override), fromDB(created)
	return a, nil
}

const keyColumns = `k.id, k.account_id, k.name, k.prefix, k.hash, k.permissions, k.environment,
	k.created_at, k.last_used_at, k.expires_at, k.revoked_at, k.replaces`

// keyRow holds the columns of a key as scanned.
type keyRow struct {
	k                         fleet.Key
	hash, perms               []byte
	created                   int64
	lastUsed, expires, revoke sql.NullInt64
}

func (r *keyRow) dest() []any {
	return []any{&r.k.ID, &r.k.AccountID, &r.k.Name, &r.k.Prefix, &r.hash, &r.perms, &r.k.Environment,
		&r.created, &r.lastUsed, &r.expires, &r.revoke, &r.k.Replaces}
}

func (r *keyRow) key() (fleet.Key, error) {
	var err error
	k := r.k
	if k.Hash, err = hashFromDB(r.hash); err != nil {
		return fleet.Key{}, err
	}
	if k.Permissions, err = decodePermissions(r.perms); err != nil {
		return fleet.Key{}, err
	}
	k.CreatedAt = fromDB(r.created)
	k.LastUsedAt, k.ExpiresAt, k.RevokedAt = fromNullDB(r.lastUsed), fromNullDB(r.expires), fromNullDB(r.revoke)
	return k, nil
}

func scanKey(s scanner) (fleet.Key, error) {
	var r keyRow
	if err := s.Scan(r.dest()...); err != nil {
		return fleet.Key{}, err
	}
	return r.key()
}

// conflict is a conflict error caused by a driver's error (a unique
// constraint), the cause kept for logs.
func conflict(cause error, format string, args ...any) error {
	e := fleet.Errorf(fleet.CodeConflict, format, args...)
	e.Err = cause
	return e
}

// notFound is fleet.NotFound caused by a driver's error (a foreign key).
func notFound(cause error, kind, id string) error {
	e := fleet.NotFound(kind, id)
	e.Err = cause
	return e
}

// wrap says what the store was doing when err happened; nil stays nil, and
// a store fault becomes unavailable (see fault).
func wrap(err error, doing string) error {
	if err == nil {
		return nil
	}
	return fault(fmt.Errorf("sqlstore: %s: %w", doing, err))
}

// attrsArg is a point's attributes in their binary form, NULL when none.
func attrsArg(a fleet.Attributes) any {
	if len(a) == 0 {
		return nil
	}
	b, _ := a.AppendBinary(make([]byte, 0, 8*len(a))) // it cannot fail
	return b
}

// The telemetry memory of a vehicle (fleet.TelemetryMemory) is stored as
// the JSON object encoding/json writes of it. A vehicle's row is read and
// written on each of its reports, so both ways are written out here rather
// than by reflection; a stored object that is not exactly of this form (a
// field this code does not know, an escaped string) is read by
// encoding/json, which has the last word.

// appendTelemetry appends m as encoding/json writes it.
func appendTelemetry(b []byte, m *fleet.TelemetryMemory) []byte {
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":`...)
	}
	if m.IdlingSince != nil {
		key("idling_since")
		b = appendJSONTime(b, *m.IdlingSince)
	}
	if m.Idling {
		key("idling")
		b = append(b, "true"...)
	}
	if m.IgnitionOffSince != nil {
		key("ignition_off_since")
		b = appendJSONTime(b, *m.IgnitionOffSince)
	}
	if len(m.Alarms) > 0 {
		key("alarms")
		b = append(b, '[')
		for i, a := range m.Alarms {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if a.DeviceID != "" {
				b = appendJSONText(append(b, `"device_id":`...), a.DeviceID)
				b = append(b, ',')
			}
			b = appendJSONText(append(b, `"alarm":`...), a.Alarm)
			b = appendJSONTime(append(b, `,"at":`...), a.At)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.ReportsOdometer {
		key("reports_odometer")
		b = append(b, "true"...)
	}
	if m.ReportsEngineHours {
		key("reports_engine_hours")
		b = append(b, "true"...)
	}
	if m.DriverKey != "" {
		key("driver_key")
		b = appendJSONText(b, m.DriverKey)
	}
	if m.ReportedDriverID != "" {
		key("reported_driver_id")
		b = appendJSONText(b, m.ReportedDriverID)
	}
	return append(b, '}')
}

// appendJSONTime appends t as encoding/json writes a time.Time.
func appendJSONTime(b []byte, t time.Time) []byte {
	j, err := t.MarshalJSON()
	if err != nil { // a year outside 0..9999: never stored
		return append(b, "null"...)
	}
	return append(b, j...)
}

// appendJSONText appends s as encoding/json writes a string.
func appendJSONText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s) // the rare text encoding/json escapes
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// parseTelemetry reads what appendTelemetry (or encoding/json) wrote.
func parseTelemetry(s string, m *fleet.TelemetryMemory) error {
	if parseTelemetryFast(s, m) {
		return nil
	}
	*m = fleet.TelemetryMemory{}
	return json.Unmarshal([]byte(s), m)
}

// parseTelemetryFast reads the form appendTelemetry writes, reporting
// false for anything else.
func parseTelemetryFast(s string, m *fleet.TelemetryMemory) bool {
	*m = fleet.TelemetryMemory{}
	p := jsonScan{s: s}
	return p.object(func(k string) (ok bool) {
		switch k {
		case "idling_since", "ignition_off_since":
			t, ok := p.time()
			if k == "idling_since" {
				m.IdlingSince = &t
			} else {
				m.IgnitionOffSince = &t
			}
			return ok
		case "idling":
			m.Idling, ok = p.boolean()
		case "reports_odometer":
			m.ReportsOdometer, ok = p.boolean()
		case "reports_engine_hours":
			m.ReportsEngineHours, ok = p.boolean()
		case "driver_key":
			m.DriverKey, ok = p.text()
		case "reported_driver_id":
			m.ReportedDriverID, ok = p.text()
		case "alarms":
			ok = p.alarms(m)
		}
		return ok // an unknown key: false
	}) && p.done()
}

// jsonScan reads JSON without white space and without escapes: what
// appendTelemetry writes.
type jsonScan struct{ s string }

func (p *jsonScan) done() bool { return p.s == "" }

func (p *jsonScan) byte(c byte) bool {
	if p.s != "" && p.s[0] == c {
		p.s = p.s[1:]
		return true
	}
	return false
}

func (p *jsonScan) text() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	for i := 0; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '"':
			t := p.s[:i]
			p.s = p.s[i+1:]
			return t, true
		case c < 0x20 || c == '\\' || c >= 0x80: // escapes, controls, UTF-8: encoding/json's
			return "", false
		}
	}
	return "", false
}

func (p *jsonScan) boolean() (bool, bool) {
	switch {
	case strings.HasPrefix(p.s, "true"):
		p.s = p.s[4:]
		return true, true
	case strings.HasPrefix(p.s, "false"):
		p.s = p.s[5:]
		return false, true
	}
	return false, false
}

func (p *jsonScan) time() (time.Time, bool) {
	quoted := p.s
	t, ok := p.text()
	if !ok {
		return time.Time{}, false
	}
	var at time.Time
	err := at.UnmarshalJSON([]byte(quoted[:len(t)+2])) // as encoding/json reads it
	return at, err == nil
}

// object reads an object, calling field with each key, the scanner at its
// value; false when the object or a field is not of the form.
func (p *jsonScan) object(field func(k string) bool) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	for {
		k, ok := p.text()
		if !ok || !p.byte(':') || !field(k) {
			return false
		}
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

func (p *jsonScan) alarms(m *fleet.TelemetryMemory) bool {
	if !p.byte('[') {
		return false
	}
	m.Alarms = nil // a second "alarms" replaces the first, as encoding/json reads it
	if p.byte(']') {
		m.Alarms = []fleet.AlarmSeen{}
		return true
	}
	for {
		var a fleet.AlarmSeen
		if !p.object(func(k string) (ok bool) {
			switch k {
			case "device_id":
				a.DeviceID, ok = p.text()
			case "alarm":
				a.Alarm, ok = p.text()
			case "at":
				a.At, ok = p.time()
			}
			return ok
		}) {
			return false
		}
		m.Alarms = append(m.Alarms, a)
		if p.byte(']') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}
