package fleet

import "context"

// ListEvents lists the account's events, oldest first.
func (s *Service) ListEvents(ctx context.Context, p Principal, f EventFilter, q ListQuery) (List[Event], error) {
	if err := p.allow("ListEvents"); err != nil {
		return List[Event]{}, err
	}
	if f.Type != "" && !ValidEventType(f.Type) {
		return List[Event]{}, Errorf(CodeInvalidRequest, "Unknown event type %q.", f.Type)
	}
	page, limit, err := q.page(PrefixEvent, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Event]{}, err
	}
	var es []Event
	err = s.view(ctx, func(tx Tx) (err error) { es, err = tx.Events(p.Account.ID, f, page); return err })
	if err != nil {
		return List[Event]{}, err
	}
	return finish(es, limit, func(e Event) string { return e.ID }), nil
}

// Event returns one of the account's events.
func (s *Service) Event(ctx context.Context, p Principal, id string) (Event, error) {
	if err := p.allow("Event"); err != nil {
		return Event{}, err
	}
	if !ValidID(PrefixEvent, id) {
		return Event{}, NotFound("event", id)
	}
	var e Event
	err := s.view(ctx, func(tx Tx) (err error) { e, err = tx.Event(p.Account.ID, id); return err })
	if ErrorCode(err) == CodeNotFound {
		return Event{}, NotFound("event", id)
	}
	return e, err
}
