package fleet_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// takesWholeTx lists the helpers allowed to take the whole Tx, by name
// ("Service.method" or "function"), each with why: it uses most areas.
// Every other helper takes the areas it uses (see tx_parts.go).
var takesWholeTx = map[string]string{
	"newStagedTx":  "it wraps the batch's transaction: every call but the staged writes goes to it",
	"ReplayIngest": "a store's ApplyIngest hands it its own Tx, whose methods it replays",
}

// TestHelpersTakeTheirAreas parses the package's source and fails when a
// helper takes the whole Tx: a function or method with a parameter of type
// Tx, a named function type with one, or a function literal with one that
// is not handed straight to a call (Store.Update, View: the top of a use
// case, where Tx belongs).
func TestHelpersTakeTheirAreas(t *testing.T) {
	fset, files := packageSource(t)
	var bad []string
	found := map[string]bool{}
	report := func(pos token.Pos, what string) {
		if _, ok := takesWholeTx[what]; ok {
			found[what] = true
			return
		}
		bad = append(bad, fset.Position(pos).String()+": "+what)
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if takesTx(d.Type) {
					report(d.Pos(), funcName(d))
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok {
						if ft, ok := ts.Type.(*ast.FuncType); ok && takesTx(ft) {
							report(ts.Pos(), "type "+ts.Name.Name)
						}
					}
				}
			}
		}
		// A function literal is a use case's top when it is an argument
		// of a call; one kept in a variable is a helper.
		args := map[*ast.FuncLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				for _, a := range n.Args {
					if fl, ok := a.(*ast.FuncLit); ok {
						args[fl] = true
					}
				}
			case *ast.FuncLit:
				if !args[n] && takesTx(n.Type) {
					report(n.Pos(), "a function literal")
				}
			}
			return true
		})
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s takes the whole Tx: take the areas it uses (VehicleTx, emitTx...), or name it in takesWholeTx with why", b)
	}
	for name := range takesWholeTx {
		if !found[name] {
			t.Errorf("takesWholeTx names %s, which takes no Tx any more", name)
		}
	}
}

// packageSource parses the package's source, its tests left out.
func packageSource(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	is := is.New(t)
	names, err := filepath.Glob("*.go")
	is.NoErr(err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		is.NoErr(err)
		files = append(files, f)
	}
	is.True(len(files) >= 20) // the package's source was read
	return fset, files
}

// takesTx reports whether a function type has a parameter of type Tx.
func takesTx(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		typ := p.Type
		if e, ok := typ.(*ast.Ellipsis); ok {
			typ = e.Elt
		}
		if id, ok := typ.(*ast.Ident); ok && id.Name == "Tx" {
			return true
		}
	}
	return false
}

// funcName is "Recv.name" for a method, "name" for a function.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	typ := d.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch t := typ.(type) {
	case *ast.Ident:
		return t.Name + "." + d.Name.Name
	case *ast.IndexExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			return id.Name + "." + d.Name.Name
		}
	case *ast.IndexListExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			return id.Name + "." + d.Name.Name
		}
	}
	return d.Name.Name
}
