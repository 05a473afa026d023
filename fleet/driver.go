package fleet

import (
	"encoding/json"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// A Driver is a person who drives the account's vehicles (API.md §15).
// Their Identifier is the key a device reads to tell who drives (an
// iButton, an RFID card, a phone app's driver id): a point whose
// driver_identifier attribute matches it assigns the driver to the point's
// vehicle. A driver drives one vehicle at a time; VehicleID is that vehicle,
// which only an assignment changes (AssignDriver, or a device's report).
//
// This file holds the type and its rules; the use cases are in
// service_drivers.go, the store's part in store_drivers.go.
type Driver struct {
	ID        string `json:"driver_id"`
	AccountID string `json:"-"`
	Name      string `json:"name"`
	// Identifier is unique in the account, compared without regard to
	// case (DriverIdentifierKey); "" when the driver has none.
	Identifier    string `json:"identifier"`
	Phone         string `json:"phone"`
	Email         string `json:"email"`
	LicenseNumber string `json:"license_number"`
	// LicenseExpiresOn is a date, YYYY-MM-DD.
	LicenseExpiresOn string `json:"license_expires_on"`
	Notes            string `json:"notes"`
	// ExternalID is unique in the account, in NFC (ExternalIDForm), as a
	// vehicle's is.
	ExternalID string `json:"external_id"`
	// VehicleID is the vehicle the driver drives now ("" when none). It is
	// read-only: stores derive it from the vehicles' DriverID (see
	// DriverTx), and a client changes it by assigning the driver.
	VehicleID string    `json:"vehicle_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Limits on driver fields.
const (
	MaxDriverName       = 100
	MaxDriverIdentifier = 64
	MaxDriverPhone      = 32
	MaxDriverEmail      = 254
	MaxDriverNotes      = 2000
	// MaxDriverText bounds license_number and external_id, as a
	// vehicle's text fields.
	MaxDriverText = MaxTextField
)

// MarshalJSON writes the driver as the API shows it: unset fields are null.
func (d Driver) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID               string    `json:"driver_id"`
		Name             string    `json:"name"`
		Identifier       *string   `json:"identifier"`
		Phone            *string   `json:"phone"`
		Email            *string   `json:"email"`
		LicenseNumber    *string   `json:"license_number"`
		LicenseExpiresOn *string   `json:"license_expires_on"`
		Notes            *string   `json:"notes"`
		ExternalID       *string   `json:"external_id"`
		VehicleID        *string   `json:"vehicle_id"`
		CreatedAt        time.Time `json:"created_at"`
		UpdatedAt        time.Time `json:"updated_at"`
	}{d.ID, d.Name, nullString(d.Identifier), nullString(d.Phone), nullString(d.Email), nullString(d.LicenseNumber),
		nullString(d.LicenseExpiresOn), nullString(d.Notes), nullString(d.ExternalID), nullString(d.VehicleID), d.CreatedAt, d.UpdatedAt})
}

// ValidDriverIdentifier reports whether s is a driver identifier: 1 to
// MaxDriverIdentifier printable ASCII characters (U+0021 to U+007E), no
// space. That holds every key a device reads as text: an iButton's or a
// card's number in hex or decimal, a phone app's driver id; and it keeps
// two spellings of one key from looking alike (no spaces, no look-alike
// letters of other scripts).
func ValidDriverIdentifier(s string) bool {
	if len(s) == 0 || len(s) > MaxDriverIdentifier {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// DriverIdentifierRule says what ValidDriverIdentifier accepts.
const DriverIdentifierRule = "must be 1 to 64 printable ASCII characters without spaces (letters, digits and punctuation such as 01A2B3C4D5E6F708 or card-1234)"

// DriverIdentifierKey is the form identifiers are compared in: upper case,
// so that a key a device reports in hex as 00000a1b2c3d matches a driver
// whose identifier was typed as 00000A1B2C3D. Stores key their uniqueness
// and DriverByIdentifier on it.
func DriverIdentifierKey(s string) string { return strings.ToUpper(s) }

func normaliseDriver(d *Driver) {
	d.Name = strings.TrimSpace(d.Name)
	d.Identifier = strings.TrimSpace(d.Identifier)
	d.Phone = strings.TrimSpace(d.Phone)
	d.Email = strings.TrimSpace(d.Email)
	d.LicenseNumber = strings.TrimSpace(d.LicenseNumber)
	d.LicenseExpiresOn = strings.TrimSpace(d.LicenseExpiresOn)
}

// Validate checks the fields a client sets, naming every bad one.
func (d *Driver) Validate() error {
	var val Validator
	val.Check(d.Name != "" && utf8.RuneCountInString(d.Name) <= MaxDriverName, "name", "is required, 1 to %d characters", MaxDriverName)
	val.Text("name", d.Name)
	if d.Identifier != "" {
		val.Check(ValidDriverIdentifier(d.Identifier), "identifier", "%s", DriverIdentifierRule)
	}
	if d.Phone != "" {
		val.Check(validPhone(d.Phone), "phone", "must be at most %d characters of digits, spaces and + - ( ) . /, with at least 3 digits", MaxDriverPhone)
	}
	if d.Email != "" {
		val.Check(validDriverEmail(d.Email), "email", "must be an e-mail address such as ana@example.com, at most %d characters", MaxDriverEmail)
	}
	val.Check(utf8.RuneCountInString(d.LicenseNumber) <= MaxDriverText, "license_number", "must be at most %d characters", MaxDriverText)
	val.Text("license_number", d.LicenseNumber)
	if d.LicenseExpiresOn != "" {
		val.Check(ValidDate(d.LicenseExpiresOn), "license_expires_on", "must be a date, YYYY-MM-DD")
	}
	val.Check(utf8.RuneCountInString(d.Notes) <= MaxDriverNotes, "notes", "must be at most %d characters", MaxDriverNotes)
	val.MultilineText("notes", d.Notes)
	val.Check(utf8.RuneCountInString(d.ExternalID) <= MaxDriverText, "external_id", "must be at most %d characters", MaxDriverText)
	val.Text("external_id", d.ExternalID)
	return val.Err()
}

func validPhone(s string) bool {
	if len(s) > MaxDriverPhone {
		return false
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case strings.IndexByte(" +-()./", c) >= 0:
		default:
			return false
		}
	}
	return digits >= 3
}

func validDriverEmail(s string) bool {
	if len(s) > MaxDriverEmail {
		return false
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1
}

// DriverFilter selects drivers in a list.
type DriverFilter struct {
	// Query: name, identifier, phone, e-mail, license number or external
	// id contains it, without regard to case.
	Query string
	// Identifier: only the driver with this identifier (compared as
	// DriverIdentifierKey does).
	Identifier string
	// VehicleID: only the driver who drives this vehicle now.
	VehicleID string
}

// Match reports whether d passes the filter; stores use it so that the rule
// is written once.
func (f DriverFilter) Match(d *Driver) bool {
	if f.Identifier != "" && DriverIdentifierKey(d.Identifier) != DriverIdentifierKey(f.Identifier) {
		return false
	}
	if f.VehicleID != "" && d.VehicleID != f.VehicleID {
		return false
	}
	if f.Query != "" {
		q := strings.ToLower(f.Query)
		for _, s := range []string{d.Name, d.Identifier, d.Phone, d.Email, d.LicenseNumber, d.ExternalID} {
			if strings.Contains(strings.ToLower(s), q) {
				return true
			}
		}
		return false
	}
	return true
}

// check refuses filter values that can name no driver or vehicle, as the
// query parameters that carry them, before they reach a store.
func (f DriverFilter) check() error {
	for _, p := range []struct{ name, value string }{{"q", f.Query}, {"identifier", f.Identifier}, {"vehicle_id", f.VehicleID}} {
		if err := CheckQueryText(p.name, p.value); err != nil {
			return err
		}
	}
	if f.Identifier != "" && !ValidDriverIdentifier(f.Identifier) {
		return Errorf(CodeInvalidRequest, "identifier %s.", DriverIdentifierRule)
	}
	if f.VehicleID != "" && !ValidID(PrefixVehicle, f.VehicleID) {
		return Errorf(CodeInvalidRequest, "vehicle_id must be a vehicle id (veh_...).")
	}
	return nil
}

// DriverPatch is a JSON merge patch of a driver: fields not Set stay; null
// clears an optional field. The vehicle is changed by assigning the driver
// (AssignDriver), never by a patch.
type DriverPatch struct {
	Name             Optional[string] `json:"name,omitzero"`
	Identifier       Optional[string] `json:"identifier,omitzero"`
	Phone            Optional[string] `json:"phone,omitzero"`
	Email            Optional[string] `json:"email,omitzero"`
	LicenseNumber    Optional[string] `json:"license_number,omitzero"`
	LicenseExpiresOn Optional[string] `json:"license_expires_on,omitzero"`
	Notes            Optional[string] `json:"notes,omitzero"`
	ExternalID       Optional[string] `json:"external_id,omitzero"`
}

// DriverDeleted is the answer to deleting a driver.
type DriverDeleted struct {
	DriverID string `json:"driver_id"`
	Deleted  bool   `json:"deleted"`
}

// DriverAssignment says who drives a vehicle from now on (the body of
// PUT /v1/vehicles/{vehicle_id}/driver): a driver of the account, or none
// (DriverID Set to ""). DriverID must be Set: an assignment that says
// nothing is refused rather than taken as "none".
type DriverAssignment struct {
	DriverID Optional[string] `json:"driver_id"`
}

// AssignTo is the assignment of the driver id ("" for none).
func AssignTo(driverID string) DriverAssignment { return DriverAssignment{DriverID: Some(driverID)} }

// VehicleDriver is a vehicle's driver: the answer to assigning one
// (PUT /v1/vehicles/{vehicle_id}/driver); DriverID is "" (null) when the
// vehicle has none.
type VehicleDriver struct {
	VehicleID string `json:"vehicle_id"`
	DriverID  string `json:"driver_id"`
}

// MarshalJSON writes a vehicle without a driver with driver_id null.
func (v VehicleDriver) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		VehicleID string  `json:"vehicle_id"`
		DriverID  *string `json:"driver_id"`
	}{v.VehicleID, nullString(v.DriverID)})
}

// DriverChange is the data of a vehicle.driver_changed event: the vehicle's
// driver went from From to To (nil: none) at At. Identifier is the driver
// key a device read that caused the change (with To nil when no driver of
// the account has it), nil for a change by hand (AssignDriver, deleting
// the driver) or the other end of a move (the vehicle a driver left when
// assigned to another).
type DriverChange struct {
	VehicleID  string    `json:"vehicle_id"`
	From       *string   `json:"from"`
	To         *string   `json:"to"`
	Identifier *string   `json:"identifier"`
	At         time.Time `json:"at"`
}
