package fleethttp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestHistoryPageIsTheEnvelopesJSON: a page of history written point by
// point is byte for byte the list envelope encoding/json writes.
func TestHistoryPageIsTheEnvelopesJSON(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	speed := 42.5
	pts := []fleet.Point{
		{Latitude: 52.5, Longitude: 13.4, Timestamp: at, Speed: &speed},
		{Latitude: 52.6, Longitude: 13.5, Timestamp: at.Add(1500 * time.Millisecond),
			Attributes: fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.TextAttr("note", "<b>&")}},
	}
	for _, l := range []fleet.List[fleet.Point]{
		{Items: pts, NextCursor: "dDE3OTM", HasMore: true},
		{Items: pts[:1]},
		{Items: []fleet.Point{}},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		pg := &pagination{HasMore: l.HasMore}
		if l.NextCursor != "" {
			pg.NextCursor = &l.NextCursor
		}
		is.NoErr(enc.Encode(envelope{Success: true, Data: l.Items, Pagination: pg}))
		is.Equal(string(historyPage(l).appendJSON(nil))+"\n", want.String())
	}
}
