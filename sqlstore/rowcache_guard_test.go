package sqlstore

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/matryer/is"
)

// TestWrittenTables: the guard finds the cached tables a statement writes
// whatever its spelling, and none in a statement that only reads them or
// names them in a string, a comment or another table's name.
func TestWrittenTables(t *testing.T) {
	const v, tr, a, sc = cachedVehicles, cachedTrips, cachedAlertConfig, cachedSchedules
	for _, c := range []struct {
		query string
		want  tableSet
	}{
		{`INSERT INTO vehicles (id) VALUES (?)`, v},
		{`insert or replace into "Trips" VALUES (1)`, tr},
		{`REPLACE INTO alert_config VALUES (?, 2)`, a},
		{`UPDATE OR IGNORE main.vehicles SET name = ?`, v},
		{`UPDATE vehicles AS x SET name = ?`, v},
		{`UPDATE vehicles x SET name = ?`, v},
		{`UPDATE ONLY public.trips SET points = 1`, tr},
		{`UPDATE "main"."Vehicles" SET name = ?`, v},
		{`DELETE FROM [vehicles] WHERE id = ?`, v},
		{"DELETE FROM `trips` WHERE id = ?", tr},
		{`DELETE FROM ONLY trips`, tr},
		{"-- a note\nUPDATE\n\tvehicles\nSET name = 'x'", v},
		{`UPDATE /* the fleet */ VEHICLES SET name = 'x'`, v},
		{`INSERT INTO alert_config (account_id, version) VALUES (?, 1)
			ON CONFLICT (account_id) DO UPDATE SET version = alert_config.version + 1`, a},
		{`WITH gone AS (DELETE FROM trips WHERE vehicle_id = $1 RETURNING id) SELECT count(*) FROM gone`, tr},
		{`WITH moved AS (UPDATE vehicles SET name = $1 RETURNING id) INSERT INTO trips SELECT * FROM old_trips`, v | tr},
		{`TRUNCATE TABLE points, Vehicles`, v},
		{`TRUNCATE alert_config`, a},
		{`UPDATE schedules SET name = ? WHERE id = ? RETURNING vehicle_id`, sc},
		{`DELETE FROM Schedules WHERE id = ?`, sc},
		{`DELETE FROM vehicles WHERE id = ?; INSERT INTO schedules VALUES (1)`, v | sc},

		{`SELECT * FROM vehicles v WHERE v.id = ? FOR UPDATE`, 0},
		{`SELECT id FROM trips WHERE vehicle_id = ? FOR UPDATE SKIP LOCKED`, 0},
		{`SELECT id FROM trips FOR NO KEY UPDATE OF trips`, 0},
		{`INSERT INTO points (vehicle_id, ts) SELECT id, 1 FROM vehicles`, 0},
		{`UPDATE devices SET vehicle_id = (SELECT id FROM vehicles LIMIT 1)`, 0},
		{`DELETE FROM points WHERE vehicle_id IN (SELECT id FROM vehicles)`, 0},
		{`INSERT INTO vehicle_trips VALUES (1)`, 0},
		{`INSERT INTO report_schedules (id) VALUES (?)`, 0},
		{`DELETE FROM report_schedules WHERE user_id = ?`, 0},
		{`SELECT * FROM schedules s WHERE s.vehicle_id = ANY($1) FOR UPDATE`, 0},
		{`INSERT INTO "vehicles_archive" SELECT * FROM vehicles`, 0},
		{`UPDATE devices SET name = 'UPDATE vehicles SET x = 1' WHERE id = ?`, 0},
		{`INSERT INTO events (data) VALUES ('it''s DELETE FROM trips')`, 0},
		{`/* DELETE FROM trips */ SELECT 1`, 0},
		{`SELECT replace(name, 'a', 'b') FROM vehicles`, 0},
		{`INSERT INTO idempotency (key_id) VALUES (?) ON CONFLICT (key_id) DO NOTHING`, 0},
		{`update vehicle`, 0}, // an error message's words, not a statement
		{`DELETE`, 0},
		{`"unterminated`, 0},
	} {
		if got := writtenTables(c.query); got != c.want {
			t.Errorf("writtenTables(%q) = %03b, want %03b", c.query, got, c.want)
		}
	}
}

// TestCachedTablesWrittenOnlyWhereKept reads the package's source: every
// statement (every string constant, concatenations of constants folded)
// that writes vehicles, trips or alert_config stands inside a tx.keeping
// call for those tables, in a method that keeps the row cache up to date
// itself. A write anywhere else fails here, even one the guard would
// catch by emptying the cache; one built at run time is the concern of
// TestRowCacheFollowsEveryWrite.
func TestCachedTablesWrittenOnlyWhereKept(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// fold returns the string constant e is: a literal, a constant of
	// the package, or a sum of those.
	consts := map[string]string{}
	var fold func(e ast.Expr) (string, bool)
	fold = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind == token.STRING {
				s, err := strconv.Unquote(e.Value)
				return s, err == nil
			}
		case *ast.Ident:
			s, ok := consts[e.Name]
			return s, ok
		case *ast.ParenExpr:
			return fold(e.X)
		case *ast.BinaryExpr:
			if e.Op == token.ADD {
				x, ok := fold(e.X)
				y, ok2 := fold(e.Y)
				return x + y, ok && ok2
			}
		}
		return "", false
	}
	for grew := true; grew; { // constants may name constants of later files
		grew = false
		for _, f := range files {
			for _, d := range f.Decls {
				if d, ok := d.(*ast.GenDecl); ok && d.Tok == token.CONST {
					for _, spec := range d.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if _, done := consts[n.Name]; !done && i < len(vs.Values) {
								if s, ok := fold(vs.Values[i]); ok {
									consts[n.Name], grew = s, true
								}
							}
						}
					}
				}
			}
		}
	}
	tables := map[string]tableSet{"cachedVehicles": cachedVehicles, "cachedTrips": cachedTrips, "cachedAlertConfig": cachedAlertConfig, "cachedSchedules": cachedSchedules}
	// kept evaluates keeping's first argument: cached table constants,
	// or'ed together.
	var kept func(e ast.Expr) tableSet
	kept = func(e ast.Expr) tableSet {
		switch e := e.(type) {
		case *ast.Ident:
			if ts, ok := tables[e.Name]; ok {
				return ts
			}
		case *ast.BinaryExpr:
			if e.Op == token.OR {
				return kept(e.X) | kept(e.Y)
			}
		case *ast.ParenExpr:
			return kept(e.X)
		}
		t.Errorf("%s: keeping's tables must be cached table constants", fset.Position(e.Pos()))
		return 0
	}
	var keepers []string
	for _, f := range files {
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			e, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			if _, isIdent := e.(*ast.Ident); isIdent {
				return true // a constant is read where it is declared
			}
			s, ok := fold(e)
			if !ok {
				return true
			}
			if w := writtenTables(s); w != 0 {
				var in tableSet
				fn := "a declaration"
				for _, up := range slices.Backward(stack) {
					switch up := up.(type) {
					case *ast.CallExpr:
						if sel, ok := up.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "keeping" && len(up.Args) == 2 {
							in |= kept(up.Args[0])
						}
					case *ast.FuncDecl:
						fn = up.Name.Name
					}
				}
				if w&^in != 0 {
					t.Errorf("%s: in %s, a statement that writes %03b outside tx.keeping for those tables: %.60q",
						fset.Position(e.Pos()), fn, w&^in, s)
				} else {
					keepers = append(keepers, fn)
				}
			}
			stack = stack[:len(stack)-1]
			return false // its parts are read as this whole
		})
	}
	// Not vacuous: the keeping methods' statements were found and read.
	slices.Sort(keepers)
	is.New(t).Equal(slices.Compact(keepers), []string{"BumpAlertConfig", "CreateSchedule", "CreateVehicle", "DeleteSchedule", "DeleteTrip", "DeleteVehicle", "PutTrips", "SetVehicleDriver", "UpdateSchedule", "UpdateVehicle", "flushText"})
}

// TestCachedTablesChangeOnlyByTheirStatements: no trigger writes a table,
// and only a cached table's rows cascade into a cached table (a vehicle's
// trips and schedules go with it, which DeleteVehicle forgets), so that the statements
// the guard reads are all that change the cached rows.
func TestCachedTablesChangeOnlyByTheirStatements(t *testing.T) {
	is := is.New(t)
	s, _, _ := cacheFixture(t)
	var triggers int
	is.NoErr(s.rdb.QueryRowContext(bg, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger'`).Scan(&triggers))
	is.Equal(triggers, 0)
	rows, err := s.rdb.QueryContext(bg, `SELECT m.name, f."table", f.on_update, f.on_delete
		FROM sqlite_schema m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table'`)
	is.NoErr(err)
	defer rows.Close()
	cascades := 0
	for rows.Next() {
		var child, parent, onUpdate, onDelete string
		is.NoErr(rows.Scan(&child, &parent, &onUpdate, &onDelete))
		if cachedTable(child) == 0 || onUpdate == "NO ACTION" && onDelete == "NO ACTION" {
			continue
		}
		cascades++
		if cachedTable(parent) == 0 {
			t.Errorf("%s changes with %s (ON UPDATE %s, ON DELETE %s), which the row cache does not follow", child, parent, onUpdate, onDelete)
		}
	}
	is.NoErr(rows.Err())
	is.Equal(cascades, 2) // trips and schedules with their vehicle
}

// checkedStore is a SQLite store whose every Update checks the writer's
// row cache against the rows it holds, before the caller's function (so
// after whatever wrote since the last Update: Store methods, a member
// rolled back) and after it, having filled the cache first with the
// vehicles, their latest trips and schedules, and the accounts' alert
// configuration versions, as reports' transactions fill it.
type checkedStore struct {
	*Store
	t       *testing.T
	checked *atomic.Int64 // cached rows compared with their rows
}

func (c checkedStore) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	return c.Store.Update(ctx, func(ftx fleet.Tx) error {
		x := ftx.(*tx)
		c.check(x, "before")
		c.fill(x)
		err := fn(ftx)
		c.check(x, "after")
		return err
	})
}

// fill reads, through the cache, up to 100 vehicles, their latest trips
// and schedules, and up to 100 accounts' alert configuration versions.
func (c checkedStore) fill(x *tx) {
	if x.stopped() != nil {
		return
	}
	byAccount := map[string][]string{}
	if err := c.scan(x, `SELECT account_id, id FROM vehicles ORDER BY id LIMIT 100`, func(a, id string) {
		byAccount[a] = append(byAccount[a], id)
	}); err != nil {
		c.t.Errorf("fill the cache: %v", err)
		return
	}
	if err := c.scan(x, `SELECT id, id FROM accounts ORDER BY id LIMIT 100`, func(a, _ string) {
		byAccount[a] = append(byAccount[a], []string{}...)
	}); err != nil {
		c.t.Errorf("fill the cache: %v", err)
		return
	}
	for a, ids := range byAccount {
		for _, id := range ids {
			if _, err := x.Vehicle(a, id); err != nil {
				c.t.Errorf("fill the cache: %v", err)
			}
			if _, err := x.SchedulesOfVehicle(id); err != nil {
				c.t.Errorf("fill the cache: %v", err)
			}
		}
		if _, err := x.LatestTrips(ids); err != nil {
			c.t.Errorf("fill the cache: %v", err)
		}
		if _, err := x.AlertConfigVersion(a); err != nil {
			c.t.Errorf("fill the cache: %v", err)
		}
	}
}

func (c checkedStore) scan(x *tx, query string, row func(a, b string)) error {
	rows, err := x.query(x.d.q(query))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			return err
		}
		row(a, b)
	}
	return rows.Err()
}

// check compares every row the cache holds with the row itself, read
// past the cache in the same transaction.
func (c checkedStore) check(x *tx, when string) {
	cache := x.cache
	if cache == nil || x.stopped() != nil {
		return
	}
	x.cache = nil // reads go to the file
	defer func() { x.cache = cache }()
	for id, cached := range cache.vehicles {
		v, err := x.Vehicle(cached.AccountID, id)
		var fe *fleet.Error
		switch {
		case errors.As(err, &fe) && fe.Code == fleet.CodeNotFound:
			c.t.Errorf("%s a transaction: the row cache holds vehicle %s, which is gone", when, id)
		case err != nil:
			c.t.Errorf("%s a transaction: read vehicle %s: %v", when, id, err)
		case !reflect.DeepEqual(v, cached):
			c.t.Errorf("%s a transaction: the row cache holds vehicle %s as\n%+v\nthe file as\n%+v", when, id, cached, v)
		}
		c.checked.Add(1)
	}
	for id, cached := range cache.trips {
		latest, err := x.latestTrips([]string{id})
		tr, ok := latest[id]
		switch {
		case err != nil:
			c.t.Errorf("%s a transaction: read the latest trip of %s: %v", when, id, err)
		case ok != cached.ok:
			c.t.Errorf("%s a transaction: the row cache says vehicle %s has a latest trip: %v; the file: %v", when, id, cached.ok, ok)
		case ok && !reflect.DeepEqual(tr, cached.trip):
			c.t.Errorf("%s a transaction: the row cache holds the latest trip of %s as\n%+v\nthe file as\n%+v", when, id, cached.trip, tr)
		}
		c.checked.Add(1)
	}
	for id, cached := range cache.schedules {
		schs, err := x.SchedulesOfVehicle(id)
		switch {
		case err != nil:
			c.t.Errorf("%s a transaction: read the schedules of %s: %v", when, id, err)
		case len(schs) != len(cached) || len(schs) > 0 && !reflect.DeepEqual(schs, cached):
			c.t.Errorf("%s a transaction: the row cache holds the schedules of %s as\n%+v\nthe file as\n%+v", when, id, cached, schs)
		}
		c.checked.Add(1)
	}
	for account, cached := range cache.alerts {
		v, err := x.AlertConfigVersion(account)
		if err != nil || v != cached {
			c.t.Errorf("%s a transaction: the row cache holds alert configuration version %d of %s, the file %d (%v)", when, cached, account, v, err)
		}
		c.checked.Add(1)
	}
}

// TestRowCacheFollowsEveryWrite runs the whole store contract on SQLite
// with the row cache filled and checked around every Update: whatever the
// store's methods write, the cache holds what the file holds, or nothing.
// And none of them wrote a cached table outside the methods that keep the
// cache: the guard never had to empty it.
func TestRowCacheFollowsEveryWrite(t *testing.T) {
	var checked atomic.Int64
	storetest.Run(t, func(t *testing.T) fleet.Store {
		s, err := Open(bg, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
		if err != nil {
			t.Fatal(err)
		}
		cache := s.sqlite().group.cache
		t.Cleanup(func() {
			s.Close()
			if n := cache.guarded.Load(); n != 0 {
				t.Errorf("the guard emptied the row cache %d times: a statement wrote a cached table outside tx.keeping", n)
			}
		})
		return checkedStore{Store: s, t: t, checked: &checked}
	})
	t.Logf("%d cached rows compared with the file", checked.Load())
	if checked.Load() < 1000 {
		t.Errorf("only %d cached rows compared with the file", checked.Load())
	}
}
