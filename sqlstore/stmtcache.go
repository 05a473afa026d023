package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps prepared statements of one SQLite pool, by query text.
// On SQLite, parsing and planning a statement costs more than running it
// (a one-point report's statements are parsed in the writer's critical
// section, which caps the writes per second), so a transaction runs a
// statement it has seen before from its prepared form (Tx.StmtContext
// prepares it once per connection and keeps it).
//
// A statement missing from the cache runs unprepared; it is prepared in
// the background, on a connection of the pool when one is free, since a
// transaction that prepared it itself on the pool would wait for its own
// connection (the writer has one). The cache holds at most maxCachedStmts
// queries; queries built with a variable number of placeholders fill it up
// to that and then run unprepared.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool // being prepared, or failed to prepare
	closed  bool
	// preparing counts the background prepares under way: close waits for
	// them, so that none holds a connection of the pool once the store is
	// closed (a SQLite file reopened at once would find it locked).
	preparing sync.WaitGroup
}

const maxCachedStmts = 512

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// get returns the prepared statement of query, or nil when it is not
// prepared yet (it will be).
func (c *stmtCache) get(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.m[query]
	if st == nil && !c.closed && !c.pending[query] && len(c.m)+len(c.pending) < maxCachedStmts {
		c.pending[query] = true
		c.preparing.Go(func() { c.prepare(query) })
	}
	return st
}

func (c *stmtCache) prepare(query string) {
	st, err := c.db.PrepareContext(context.Background(), query)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		return // stays pending: it runs unprepared
	}
	if c.closed {
		st.Close()
		return
	}
	delete(c.pending, query)
	c.m[query] = st
}

// close closes the statements; later ones are closed as they come.
func (c *stmtCache) close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.preparing.Wait() // each closes its statement, seeing closed
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for q, st := range c.m {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
		delete(c.m, q)
	}
	return first
}
