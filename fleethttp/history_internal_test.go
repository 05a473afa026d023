package fleethttp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestHistoryPageIsTheEnvelopesJSON: a page of history in its envelope is
// byte for byte the list envelope encoding/json writes. (That the service
// writes its points as encoding/json does is storetest's
// HistoryJSONIsListHistorys, on every store.)
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
		var data bytes.Buffer // the points as encoding/json writes them
		enc = json.NewEncoder(&data)
		enc.SetEscapeHTML(false)
		is.NoErr(enc.Encode(l.Items))
		page := historyPage{Data: bytes.TrimSuffix(data.Bytes(), []byte("\n")), NextCursor: l.NextCursor, HasMore: l.HasMore}
		is.Equal(string(page.appendJSON(nil))+"\n", want.String())
	}
}
