package fleet_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

var principalType = reflect.TypeFor[fleet.Principal]()

// principalUseCases are the Service's methods that take a principal after
// the context: the use cases, by name.
func principalUseCases() map[string]reflect.Method {
	out := map[string]reflect.Method{}
	t := reflect.TypeFor[*fleet.Service]()
	for m := range t.Methods() {
		if m.Type.NumIn() >= 3 && m.Type.In(2) == principalType {
			out[m.Name] = m
		}
	}
	return out
}

// The permission table is the Service's use cases, no more and no less,
// and each use case checks what the table says first of all: called by a
// key without permissions it is insufficient_permissions naming exactly
// the table's permission, and with only that permission it is not.
func TestEveryUseCaseChecksItsPermission(t *testing.T) {
	is := is.New(t)
	methods := principalUseCases()
	names := fleet.UseCases()
	is.Equal(len(names), len(methods)) // one entry per use case
	svc, _ := newService(t)
	acc, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	call := func(m reflect.Method, perms ...fleet.Permission) error {
		p := fleet.Principal{Key: fleet.Key{ID: "key_test", AccountID: acc.ID, Permissions: perms}, Account: acc}
		args := []reflect.Value{reflect.ValueOf(svc), reflect.ValueOf(context.Background()), reflect.ValueOf(p)}
		for i := 3; i < m.Type.NumIn(); i++ {
			args = append(args, reflect.Zero(m.Type.In(i))) // nothing sensible: the permission comes first
		}
		out := m.Func.Call(args)
		if errV := out[len(out)-1]; !errV.IsNil() {
			return errV.Interface().(error)
		}
		if sub, ok := out[0].Interface().(*fleet.Subscription); ok && sub != nil {
			sub.Close()
		}
		return nil
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			m, ok := methods[name]
			is.True(ok) // the table names a use case the Service has
			perm, ok := fleet.PermissionOf(name)
			is.True(ok)
			if perm != "" {
				err := call(m)
				is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
				is.True(strings.Contains(fleet.ErrorMessage(err), perm)) // names the table's permission
			}
			err := call(m, perm)
			is.True(fleet.ErrorCode(err) != fleet.CodeInsufficientPermissions) // that permission is enough
		})
	}
}
