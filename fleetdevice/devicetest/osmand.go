package devicetest

import (
	"encoding/json"
	"net/url"
	"strconv"
)

// OsmAnd reports are HTTP requests (the Traccar Client apps), one
// position each, answered 200 with an empty body once stored; an unknown
// identifier is answered 400 (404 in the JSON form).

// OsmAndQuery is the query string of a report of p by the device id:
// id, timestamp (Unix seconds, milliseconds when the time has them), lat,
// lon, speed (knots), bearing, altitude, valid.
func OsmAndQuery(id string, p Point) string {
	ts := p.Time.Unix()
	if p.Time.Nanosecond() != 0 {
		ts = p.Time.UnixMilli()
	}
	// In this order, as the apps send it (url.Values would sort it).
	return "id=" + url.QueryEscape(id) +
		"&timestamp=" + strconv.FormatInt(ts, 10) +
		"&lat=" + num(p.Latitude) + "&lon=" + num(p.Longitude) +
		"&speed=" + num(knots(p.Speed)) + "&bearing=" + num(p.Heading) +
		"&altitude=" + num(p.Altitude) + "&valid=" + strconv.FormatBool(p.Valid)
}

// OsmAndURL is the URL of a GET report of p to the server at base
// ("http://host:5055").
func OsmAndURL(base, id string, p Point) string {
	return base + "/?" + OsmAndQuery(id, p)
}

// OsmAndJSON is the body of a report of p in the JSON form (Traccar
// Client 9 and later, Content-Type application/json): speed in m/s.
func OsmAndJSON(id string, p Point) []byte {
	type coords struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
		Speed     float64 `json:"speed"`
		Heading   float64 `json:"heading"`
		Altitude  float64 `json:"altitude"`
		Accuracy  float64 `json:"accuracy"`
	}
	type location struct {
		Timestamp string `json:"timestamp"`
		Coords    coords `json:"coords"`
		IsMoving  bool   `json:"is_moving"`
		Odometer  int    `json:"odometer"`
	}
	b, _ := json.Marshal(struct {
		Location location `json:"location"`
		DeviceID string   `json:"device_id"`
	}{
		Location: location{
			Timestamp: p.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
			Coords:    coords{p.Latitude, p.Longitude, p.Speed / 3.6, p.Heading, p.Altitude, 5},
			IsMoving:  p.Speed > 0,
		},
		DeviceID: id,
	})
	return b
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
