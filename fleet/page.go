package fleet

import (
	"encoding/base64"
	"strings"
)

// Page limits for list endpoints.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 500
)

// Page asks a store for the items whose id sorts after After, at most Limit
// of them, in id order. Because ids only grow, a walk by cursor neither skips
// nor repeats an item while data changes.
//
// With Newest, it asks for the items whose id sorts before After (every
// item when After is ""), at most Limit of them, in descending id order:
// newest first. Only Tx.Alerts and Tx.Deliveries are asked with Newest,
// and every store honours it there; no other list is.
type Page struct {
	After  string
	Limit  int
	Newest bool
}

// List is one page of results.
type List[T any] struct {
	Items      []T
	NextCursor string // "" on the last page
	HasMore    bool
}

// ListQuery is how a caller asks for a page: a cursor from a previous page
// (or "") and a limit (0 for the default).
type ListQuery struct {
	Cursor string
	Limit  int
	// Newest lists the newest items first; the cursor of such a page
	// leads to older items (and EncodeCursor(id) without Newest to the
	// items newer than id, oldest first). Only the lists whose use case
	// says so take it (ListAlerts, ListDeliveries); the others refuse it
	// as invalid_request.
	Newest bool
}

// page turns a query into the Page a store is asked for: one more than the
// limit, so that the service can tell whether more follow. It refuses
// Newest: a list that can go newest first asks with pageEitherOrder.
func (q ListQuery) page(prefix string, def, maxLimit int) (Page, int, error) {
	if q.Newest {
		return Page{}, 0, Errorf(CodeInvalidRequest, "This list has no newest-first order.")
	}
	return q.pageEitherOrder(prefix, def, maxLimit)
}

// pageEitherOrder is page for the lists whose store method honours
// Page.Newest.
func (q ListQuery) pageEitherOrder(prefix string, def, maxLimit int) (Page, int, error) {
	limit := q.Limit
	if limit == 0 {
		limit = def
	}
	if limit < 1 || limit > maxLimit {
		return Page{}, 0, Errorf(CodeInvalidRequest, "limit must be between 1 and %d.", maxLimit)
	}
	after := ""
	if q.Cursor != "" {
		id, ok := DecodeCursor(q.Cursor)
		if !ok || !strings.HasPrefix(id, prefix+"_") {
			return Page{}, 0, Errorf(CodeInvalidRequest, "The cursor is not valid.")
		}
		after = id
	}
	return Page{After: after, Limit: limit + 1, Newest: q.Newest}, limit, nil
}

// finish cuts the extra item off a page the store returned and sets the
// cursor of the next page.
func finish[T any](items []T, limit int, id func(T) string) List[T] {
	l := List[T]{Items: items}
	if len(items) > limit {
		l.Items = items[:limit]
		l.HasMore = true
		l.NextCursor = EncodeCursor(id(items[limit-1]))
	}
	if l.Items == nil {
		l.Items = []T{}
	}
	return l
}

const cursorVersion = "c1:"

// EncodeCursor makes the opaque cursor that resumes a walk after id.
func EncodeCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + id))
}

// DecodeCursor returns the id a cursor resumes after.
func DecodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	id, ok := strings.CutPrefix(string(b), cursorVersion)
	return id, ok && id != ""
}
