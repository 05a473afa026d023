package memstore

import (
	"slices"
	"sort"

	"github.com/fleetkit/fleetapi/fleet"
)

// table holds one kind of resource: by id, and per account in id order.
// Values are copied in and out by the clone function, so that no caller
// shares memory with the store.
type table[T any] struct {
	kind    string
	byID    map[string]T
	owner   map[string]string   // id -> account id
	order   map[string][]string // account id -> ids, sorted
	clone   func(T) T
	idOf    func(T) string
	account func(T) string
}

func newTable[T any](kind string, idOf, account func(T) string, clone func(T) T) *table[T] {
	if clone == nil {
		clone = func(v T) T { return v }
	}
	return &table[T]{kind: kind, byID: map[string]T{}, owner: map[string]string{}, order: map[string][]string{},
		clone: clone, idOf: idOf, account: account}
}

func (t *table[T]) get(accountID, id string) (T, error) {
	v, ok := t.byID[id]
	if !ok || (accountID != "" && t.owner[id] != accountID) {
		var zero T
		return zero, fleet.NotFound(t.kind, id)
	}
	return t.clone(v), nil
}

func (t *table[T]) insert(tx *txn, v T) error {
	id, acc := t.idOf(v), t.account(v)
	if _, ok := t.byID[id]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A %s with id %q exists.", t.kind, id)
	}
	t.byID[id] = t.clone(v)
	t.owner[id] = acc
	ids := t.order[acc]
	i, _ := slices.BinarySearch(ids, id)
	t.order[acc] = slices.Insert(ids, i, id)
	tx.undo(func() { t.remove(acc, id) })
	return nil
}

func (t *table[T]) put(tx *txn, v T) error {
	id := t.idOf(v)
	old, ok := t.byID[id]
	if !ok || t.owner[id] != t.account(v) {
		return fleet.NotFound(t.kind, id)
	}
	t.byID[id] = t.clone(v)
	tx.undo(func() { t.byID[id] = old })
	return nil
}

func (t *table[T]) delete(tx *txn, accountID, id string) error {
	old, ok := t.byID[id]
	if !ok || t.owner[id] != accountID {
		return fleet.NotFound(t.kind, id)
	}
	t.remove(accountID, id)
	tx.undo(func() {
		t.byID[id] = old
		t.owner[id] = accountID
		ids := t.order[accountID]
		i, _ := slices.BinarySearch(ids, id)
		t.order[accountID] = slices.Insert(ids, i, id)
	})
	return nil
}

func (t *table[T]) remove(accountID, id string) {
	delete(t.byID, id)
	delete(t.owner, id)
	ids := t.order[accountID]
	if i, ok := slices.BinarySearch(ids, id); ok {
		t.order[accountID] = slices.Delete(ids, i, i+1)
	}
}

// list returns the account's values after p.After in id order that keep
// says yes to (nil keeps all), at most p.Limit of them; with p.Newest,
// those before p.After in descending id order.
func (t *table[T]) list(accountID string, p fleet.Page, keep func(T) bool) []T {
	ids := t.order[accountID]
	i, step := sort.SearchStrings(ids, p.After), 1
	switch {
	case p.Newest && p.After == "":
		i, step = len(ids)-1, -1
	case p.Newest:
		i, step = i-1, -1
	case i < len(ids) && ids[i] == p.After:
		i++
	}
	out := []T{}
	for ; i >= 0 && i < len(ids) && len(out) < p.Limit; i += step {
		v := t.byID[ids[i]]
		if keep == nil || keep(v) {
			out = append(out, t.clone(v))
		}
	}
	return out
}

// txn is the undo log of one Update: on failure its entries run in reverse.
type txn struct {
	undos    []func()
	readOnly bool
}

func (tx *txn) undo(f func()) { tx.undos = append(tx.undos, f) }

func (tx *txn) rollback() {
	for i := len(tx.undos) - 1; i >= 0; i-- {
		tx.undos[i]()
	}
	tx.undos = nil
}

func (tx *txn) writable() error {
	if tx.readOnly {
		return fleet.Errorf(fleet.CodeInternal, "write in a read-only transaction")
	}
	return nil
}
