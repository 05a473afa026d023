// Package osmand decodes the OsmAnd protocol of the Traccar Client apps,
// OsmAnd and most DIY senders: one position an HTTP request, in its query,
// a form body, or the JSON body of Traccar Client 9 and later (Decode).
// It follows Traccar's OsmAndProtocolDecoder. The request is read by the
// OsmAnd handler of fleetdevice's Server, which answers it.
//
// OsmAnd is HTTP, not a stream: it has no devproto.Decoder, and its row of
// fleetdevice.Protocols has none. Commands to devices go the other way:
// Encoder (encode.go) turns a custom command into the body of the answer
// to the device's next request.
package osmand

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Request is one HTTP request of the OsmAnd protocol (the Traccar
// Client apps and most DIY senders), as the listener read it.
type Request struct {
	Method      string
	RawQuery    string // the URL's query, without '?'
	ContentType string
	Body        []byte // at most the listener's body limit
}

// Bounds of an OsmAnd request; past them it is refused.
const (
	// MaxBody bounds the body Decode reads.
	MaxBody = 64 << 10
	// maxParams bounds the parameters of a request, and the extras
	// of the JSON form.
	maxParams = 64
	// maxKey and maxValue bound a parameter's name and value.
	maxKey   = 64
	maxValue = 1024
)

// Decode decodes one OsmAnd request into m: one position, the
// device's identifier in m.Identifier, and in m.Reply the body of the
// 200 answer (empty). It reports whether the request was the JSON form
// (whose unknown identifier is answered 404, the query and form ones'
// 400). An error means the request is not one of the protocol (400).
//
// The query form (any method) takes its parameters from the URL's query,
// or, when the URL has none, from the body (form-encoded): `id` or
// `deviceid` (required), `lat` and `lon` or `location=lat,lon`,
// `timestamp` (epoch seconds, epoch milliseconds from 2^31−1 on, ISO 8601,
// or `yyyy-MM-dd HH:mm:ss`; a time without a zone is UTC; without it, the
// server's time), `speed` (knots), `bearing` or `heading`, `altitude`,
// `accuracy` (m), `hdop`, `batt` (%), `charge`, `valid` (true or 1; a
// position is valid unless it says otherwise) and `driverUniqueId`;
// `cell`, `wifi` and `notificationToken` are read past. Any other
// parameter becomes an attribute: a number if it is one, true or false, or
// a string.
//
// The JSON form (Content-Type application/json, Traccar Client 9 and
// later) is `{"device_id", "location": {"timestamp", "coords": {latitude,
// longitude, speed (m/s), heading, accuracy, altitude}, "is_moving",
// "odometer", "event", "battery": {level 0..1, is_charging}, "activity":
// {type}, "mock", "alarm", "extras": {...}}}`; a speed, heading, accuracy
// or battery level of −1 is unknown.
//
// A request without coordinates (the query form without `lat`/`lon`, the
// JSON form without `coords`) carries no position: m.Kind is KindOther, and
// the device is known to be alive, nothing more. A request is refused when
// it has no identifier, a known parameter that does not parse (a
// coordinate out of range included), more than 64 parameters, a name
// longer than 64 bytes or a value longer than 1024, or a body over
// MaxBody; and when it gives a value twice (API.md §13), which
// parser would pick which one being nobody's guess: a parameter twice
// (`id=a&id=b`, `id=a;id=b`, names compared once unescaped), two that say
// the same (`id` and `deviceid`, `lat` or `lon` and `location`, `bearing`
// and `heading`), or a member twice in one object of the JSON form (names
// compared without regard to case, as encoding/json matches them).
func Decode(r Request, s *devproto.Session, m *devproto.Message) (json bool, err error) {
	if len(r.Body) > MaxBody {
		return false, osmAndError("body over %d bytes", MaxBody)
	}
	if ct := strings.ToLower(strings.TrimSpace(r.ContentType)); strings.HasPrefix(ct, "application/json") {
		return true, osmAndJSON(r.Body, s, m)
	}
	raw := r.RawQuery
	if osmAndEmpty(raw) {
		raw = string(r.Body)
	}
	return false, osmAndQuery(raw, s, m)
}

func osmAndError(format string, args ...any) error {
	return fmt.Errorf("%w: osmand: "+format, append([]any{devproto.ErrGarbage}, args...)...)
}

// osmAndEmpty reports whether a query has no parameter.
func osmAndEmpty(q string) bool {
	return strings.Trim(q, "&;") == ""
}

// osmAndQuery decodes the query (or form) form.
func osmAndQuery(raw string, s *devproto.Session, m *devproto.Message) (err error) {
	var (
		lat, lon       float64
		hasLat, hasLon bool
		hasTime        bool
		n              int
	)
	p := devproto.NextPosition(m)
	defer func() {
		if err != nil || m.Kind != devproto.KindPositions {
			devproto.DropPosition(m)
			m.Kind = devproto.KindOther
		}
	}()
	p.Valid = true
	var given osmAndGiven
	for len(raw) > 0 {
		var pair string
		if i := strings.IndexAny(raw, "&;"); i >= 0 {
			pair, raw = raw[:i], raw[i+1:]
		} else {
			pair, raw = raw, ""
		}
		if pair == "" {
			continue
		}
		if n++; n > maxParams {
			return osmAndError("more than %d parameters", maxParams)
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return osmAndError("parameter name %q: %v", k, err)
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return osmAndError("parameter %s: %v", key, err)
		}
		if key == "" {
			continue
		}
		if err := osmAndCheckParam(key, value); err != nil {
			return err
		}
		if !given.add(key) {
			return osmAndError("%s given twice", key)
		}
		switch key {
		case "id", "deviceid":
			if !devproto.IdentifierOK(value) {
				return osmAndError("%s %q is not an identifier", key, value)
			}
			m.Identifier = value
		case "notificationToken", "cell", "wifi":
			// The server sends no notifications and does not locate by
			// cell towers or access points.
		case "valid":
			p.Valid = strings.EqualFold(value, "true") || value == "1"
		case "timestamp":
			t, err := osmAndTime(value)
			if err != nil {
				return err
			}
			p.Time, hasTime = t, true
		case "lat":
			if lat, err = osmAndNumber(key, value); err != nil {
				return err
			}
			hasLat = true
		case "lon":
			if lon, err = osmAndNumber(key, value); err != nil {
				return err
			}
			hasLon = true
		case "location":
			parts := strings.SplitN(value, ",", 3)
			if len(parts) < 2 {
				return osmAndError("location %q is not lat,lon", value)
			}
			if lat, err = osmAndNumber(key, parts[0]); err != nil {
				return err
			}
			if lon, err = osmAndNumber(key, parts[1]); err != nil {
				return err
			}
			hasLat, hasLon = true, true
		case "speed":
			v, err := osmAndNumber(key, value)
			if err != nil {
				return err
			}
			p.Speed, p.HasSpeed = v*devproto.KnotsToKmh, true
		case "bearing", "heading":
			v, err := osmAndNumber(key, value)
			if err != nil {
				return err
			}
			p.Heading, p.HasHeading = v, true
		case "altitude":
			v, err := osmAndNumber(key, value)
			if err != nil {
				return err
			}
			p.Altitude, p.HasAltitude = v, true
		case "accuracy", "hdop":
			v, err := osmAndNumber(key, value)
			if err != nil {
				return err
			}
			name := devproto.AttrHDOP
			if key == "accuracy" {
				name = devproto.AttrAccuracyM
			}
			devproto.SetNum(p, name, v)
		case "batt":
			v, err := osmAndNumber(key, value)
			if err != nil {
				return err
			}
			devproto.SetNum(p, devproto.AttrBatteryLevel, v)
		case "charge":
			devproto.SetBool(p, devproto.AttrCharging, strings.EqualFold(value, "true"))
		case "driverUniqueId":
			// accuracy, hdop, batt, charge, driverUniqueId: the names of
			// Traccar's (OsmAndProtocolDecoder.java:155-159) in the
			// vocabulary's.
			devproto.SetStr(p, devproto.AttrDriverIdentifier, value)
		default:
			osmAndAttr(p, key, value)
		}
	}
	if m.Identifier == "" {
		return osmAndError("no id")
	}
	if !hasTime {
		p.Time = s.Now.UTC()
	} else if p.Time.IsZero() {
		p.Valid = false // a time that cannot exist
	}
	return osmAndLocate(m, p, lat, lon, hasLat && hasLon)
}

// osmAndGiven is what a query form request has given: the values its
// parameters name, one name for parameters that say the same.
type osmAndGiven struct {
	n     int
	names [2 * maxParams]string
}

// add notes the values parameter key gives, and reports false when one
// was given already.
func (g *osmAndGiven) add(key string) bool {
	switch key {
	case "deviceid":
		key = "id"
	case "bearing":
		key = "heading"
	case "batt":
		key = "batteryLevel"
	case "location":
		return g.add("lat") && g.add("lon")
	}
	for _, name := range g.names[:g.n] {
		if name == key {
			return false
		}
	}
	g.names[g.n] = key
	g.n++
	return true
}

// osmAndLocate sets the coordinates of p, the request's position, when it
// has them; the caller drops p when it has not.
func osmAndLocate(m *devproto.Message, p *devproto.Position, lat, lon float64, located bool) error {
	m.Kind = devproto.KindOther
	if !located {
		return nil
	}
	p.Latitude, p.Longitude = lat, lon
	if !devproto.Usable(p) {
		return osmAndError("position out of range (coordinates %v, %v)", lat, lon)
	}
	m.Kind = devproto.KindPositions
	return nil
}

// osmAndCheckParam bounds a parameter.
func osmAndCheckParam(key, value string) error {
	if len(key) > maxKey {
		return osmAndError("parameter name over %d bytes", maxKey)
	}
	if len(value) > maxValue {
		return osmAndError("parameter %s over %d bytes", key, maxValue)
	}
	if !utf8.ValidString(key) || strings.IndexFunc(key, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return osmAndError("parameter name %q", key)
	}
	return nil
}

// osmAndNumber parses a known parameter's number.
func osmAndNumber(key, value string) (float64, error) {
	v, ok := devproto.JavaDouble(strings.TrimSpace(value))
	if !ok {
		return 0, osmAndError("%s %q is not a number", key, value)
	}
	return v, nil
}

// osmAndAttr sets an attribute of another parameter (Traccar keeps them
// under their names, OsmAndProtocolDecoder.java:160-171), under its name in
// snake_case ("fuelRate" → "fuel_rate"; a name that cannot be one is left
// out): a number if it is one, true or false, else the string. A name of
// the common vocabulary (API.md §14: "ignition", "alarm", "power_v"...)
// takes the vocabulary's type (osmAndVocab).
func osmAndAttr(p *devproto.Position, key, value string) {
	name, ok := devproto.SnakeCase(key)
	if !ok {
		return
	}
	if kind, ok := devproto.VocabKind(name); ok {
		osmAndVocab(p, name, kind, value)
		return
	}
	if v, ok := devproto.JavaDouble(strings.TrimSpace(value)); ok {
		devproto.SetNum(p, name, v)
		return
	}
	switch value {
	case "true":
		devproto.SetBool(p, name, true)
	case "false":
		devproto.SetBool(p, name, false)
	default:
		devproto.SetStr(p, name, value)
	}
}

// osmAndVocab sets an attribute of the common vocabulary from its text, in
// the vocabulary's type: a boolean from true, false, 1 or 0 (in any case),
// a number, or text (alarm words translated by osmAndAlarm); a value that
// is not of the type is left out.
func osmAndVocab(p *devproto.Position, name string, kind devproto.AttrKind, value string) {
	switch kind {
	case devproto.AttrBool:
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "true", "1":
			devproto.SetBool(p, name, true)
		case "false", "0":
			devproto.SetBool(p, name, false)
		}
	case devproto.AttrNumber:
		if v, ok := devproto.JavaDouble(strings.TrimSpace(value)); ok {
			devproto.SetNum(p, name, v)
		}
	default:
		if name == devproto.AttrAlarm {
			osmAndAlarm(p, value)
			return
		}
		devproto.SetStr(p, name, value)
	}
}

// osmAndAlarm sets the alarm of an "alarm" parameter: its comma-separated
// words in the vocabulary (Traccar's words, which Traccar Client and
// other senders use, translated: "powerCut" → "power_cut"); a word with no
// common name is "general", an alarm all the same.
func osmAndAlarm(p *devproto.Position, value string) {
	var alarms string
	for _, word := range strings.Split(value, ",") {
		if word = strings.TrimSpace(word); word == "" {
			continue
		}
		w, ok := devproto.TraccarAlarm(word)
		if !ok {
			w = devproto.AlarmGeneral
		}
		alarms = devproto.AlarmJoin(alarms, w)
	}
	if alarms != "" {
		devproto.SetStr(p, devproto.AttrAlarm, alarms)
	}
}

// osmAndTime reads a timestamp: epoch seconds, or milliseconds from 2^31−1
// on; ISO 8601 (with T); or yyyy-MM-dd HH:mm:ss. A time without a zone is
// UTC. A written time that cannot exist (day 32, hour 25) is the zero
// time: the position has no fix (API.md §13).
func osmAndTime(v string) (time.Time, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < math.MaxInt32 {
			if n < -math.MaxInt64/1000 {
				return time.Time{}, osmAndError("timestamp %q out of range", v)
			}
			n *= 1000
		}
		t := time.UnixMilli(n).UTC()
		if t.Year() < 1 || t.Year() > 9999 {
			return time.Time{}, osmAndError("timestamp %q out of range", v)
		}
		return t, nil
	}
	if strings.Contains(v, "T") {
		return osmAndISO(v)
	}
	if t, err := time.Parse("2006-01-02 15:04:05", v); err == nil {
		return t.UTC(), nil
	}
	return osmAndImpossible(v)
}

// osmAndWritten is the form of a written time (ISO 8601, or yyyy-MM-dd
// HH:mm:ss), whatever its digits say.
var osmAndWritten = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?| \d{2}:\d{2}:\d{2})$`)

// osmAndImpossible is what a timestamp that did not parse is: the zero
// time when it has the form of a written time (its digits name one that
// cannot exist: no fix), else a bad request.
func osmAndImpossible(v string) (time.Time, error) {
	if osmAndWritten.MatchString(v) {
		return time.Time{}, nil
	}
	return time.Time{}, osmAndError("timestamp %q is not a time", v)
}

// osmAndISO reads an ISO 8601 time, UTC when it has no zone; one that
// cannot exist is the zero time (osmAndImpossible).
func osmAndISO(v string) (time.Time, error) {
	for _, layout := range [...]string{
		time.RFC3339Nano,
		"2006-01-02T15:04:05.999999999Z0700",
		"2006-01-02T15:04:05.999999999",
	} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return osmAndImpossible(v)
}

// osmAndLocation is the JSON form's location.
type osmAndLocation struct {
	Timestamp *string `json:"timestamp"`
	Coords    *struct {
		Latitude  *float64 `json:"latitude"`
		Longitude *float64 `json:"longitude"`
		Speed     *float64 `json:"speed"`
		Heading   *float64 `json:"heading"`
		Accuracy  *float64 `json:"accuracy"`
		Altitude  *float64 `json:"altitude"`
	} `json:"coords"`
	IsMoving *bool    `json:"is_moving"`
	Odometer *float64 `json:"odometer"`
	Event    *string  `json:"event"`
	Mock     *bool    `json:"mock"`
	Activity *struct {
		Type *string `json:"type"`
	} `json:"activity"`
	Battery *struct {
		Level      *float64 `json:"level"`
		IsCharging *bool    `json:"is_charging"`
	} `json:"battery"`
	Alarm  *string         `json:"alarm"`
	Extras json.RawMessage `json:"extras"`
}

// osmAndJSON decodes the JSON form.
func osmAndJSON(body []byte, s *devproto.Session, m *devproto.Message) (err error) {
	var root struct {
		DeviceID json.RawMessage `json:"device_id"`
		Location *osmAndLocation `json:"location"`
	}
	if err := json.Unmarshal(body, &root); err != nil {
		return osmAndError("body: %v", err)
	}
	if err := jsonMembersOnce(body); err != nil {
		return err
	}
	id := string(root.DeviceID) // a number, as it is written
	if len(root.DeviceID) > 0 && root.DeviceID[0] == '"' {
		if err := json.Unmarshal(root.DeviceID, &id); err != nil {
			return osmAndError("device_id: %v", err)
		}
	}
	if !devproto.IdentifierOK(id) {
		return osmAndError("device_id %q is not an identifier", id)
	}
	m.Identifier = id
	loc := root.Location
	if loc == nil {
		return osmAndError("no location")
	}

	p := devproto.NextPosition(m)
	defer func() {
		if err != nil || m.Kind != devproto.KindPositions {
			devproto.DropPosition(m)
			m.Kind = devproto.KindOther
		}
	}()
	p.Time = s.Now.UTC()
	if loc.Timestamp != nil {
		t, err := osmAndISO(*loc.Timestamp)
		if err != nil {
			return err
		}
		p.Time = t
	}
	var lat, lon float64
	located := loc.Coords != nil
	if c := loc.Coords; located {
		if c.Latitude == nil || c.Longitude == nil {
			return osmAndError("coords without latitude or longitude")
		}
		p.Valid = true
		lat, lon = *c.Latitude, *c.Longitude
		if c.Speed != nil && *c.Speed >= 0 {
			p.Speed, p.HasSpeed = *c.Speed*3.6, true
		}
		if c.Heading != nil && *c.Heading >= 0 {
			p.Heading, p.HasHeading = *c.Heading, true
		}
		if c.Accuracy != nil && *c.Accuracy >= 0 {
			devproto.SetNum(p, devproto.AttrAccuracyM, *c.Accuracy)
		}
		if c.Altitude != nil {
			p.Altitude, p.HasAltitude = *c.Altitude, true
		}
	}
	if loc.Event != nil {
		devproto.SetStr(p, devproto.AttrEvent, *loc.Event)
	}
	if loc.IsMoving != nil {
		devproto.SetBool(p, devproto.AttrMotion, *loc.IsMoving)
	}
	if loc.Odometer != nil {
		// Metres, whole as Traccar reads them (OsmAndProtocolDecoder.java:
		// 254-256).
		devproto.SetNum(p, devproto.AttrOdometerKm, math.Trunc(*loc.Odometer)/1000)
	}
	if loc.Mock != nil {
		devproto.SetBool(p, "mock", *loc.Mock)
	}
	if loc.Activity != nil && loc.Activity.Type != nil {
		devproto.SetStr(p, "activity", *loc.Activity.Type)
	}
	if b := loc.Battery; b != nil {
		if b.Level != nil && *b.Level >= 0 {
			devproto.SetNum(p, devproto.AttrBatteryLevel, math.Trunc(*b.Level*100))
		}
		if b.IsCharging != nil && *b.IsCharging {
			devproto.SetBool(p, devproto.AttrCharging, true)
		}
	}
	if loc.Alarm != nil {
		osmAndAlarm(p, *loc.Alarm)
	}
	if err := osmAndExtras(p, loc.Extras, loc.Alarm != nil); err != nil {
		return err
	}
	if p.Time.IsZero() {
		p.Valid = false // a time that cannot exist
	}
	return osmAndLocate(m, p, lat, lon, located)
}

// osmAndExtras sets the attributes of the JSON form's extras, in their
// order, as osmAndAttr does the query's parameters: numbers, booleans and
// strings (nulls, objects and arrays are read past).
func osmAndExtras(p *devproto.Position, extras json.RawMessage, hasAlarm bool) error {
	if len(extras) == 0 || string(extras) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(extras))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return osmAndError("extras is not an object")
	}
	for n := 0; dec.More(); n++ {
		if n >= maxParams {
			return osmAndError("more than %d extras", maxParams)
		}
		tok, err := dec.Token()
		if err != nil {
			return osmAndError("extras: %v", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return osmAndError("extras: %v", err)
		}
		if key == "" || (key == "alarm" && hasAlarm) {
			continue
		}
		if err := osmAndCheckParam(key, ""); err != nil {
			return err
		}
		switch raw[0] {
		case '"':
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return osmAndError("extras %s: %v", key, err)
			}
			if len(v) > maxValue {
				return osmAndError("extras %s over %d bytes", key, maxValue)
			}
			osmAndExtra(p, key, v, devproto.AttrString)
		case 't', 'f':
			osmAndExtra(p, key, string(raw), devproto.AttrBool)
		case 'n', '{', '[':
		default:
			osmAndExtra(p, key, string(raw), devproto.AttrNumber)
		}
	}
	return nil
}

// osmAndExtra sets an extra of JSON type kind whose text is value (a
// string's contents, or the number or boolean as written), under its name
// in snake_case; a name of the vocabulary takes the vocabulary's type.
func osmAndExtra(p *devproto.Position, key, value string, kind devproto.AttrKind) {
	name, ok := devproto.SnakeCase(key)
	if !ok {
		return
	}
	if vocab, ok := devproto.VocabKind(name); ok {
		osmAndVocab(p, name, vocab, value)
		return
	}
	switch kind {
	case devproto.AttrString:
		devproto.SetStr(p, name, value)
	case devproto.AttrBool:
		devproto.SetBool(p, name, value == "true")
	default:
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			devproto.SetNum(p, name, v)
		}
	}
}
