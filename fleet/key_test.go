package fleet_test

import (
	"crypto/sha256"
	"hash/crc32"
	"regexp"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestSecretFormat(t *testing.T) {
	is := is.New(t)
	shape := regexp.MustCompile(`^fleet_[0-9A-Za-z]{38}$`)
	seen := map[string]bool{}
	for range 200 {
		s := fleet.NewSecret()
		is.True(shape.MatchString(s))
		is.True(fleet.CheckSecret(s))
		is.True(!seen[s])
		seen[s] = true
	}
}

func TestCheckSecretRefusesEverySingleCharacterChange(t *testing.T) {
	is := is.New(t)
	s := fleet.NewSecret()
	for i := len(fleet.SecretPrefix); i < len(s); i++ {
		b := []byte(s)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		is.True(!fleet.CheckSecret(string(b))) // a mistyped key fails its checksum
	}
	for _, bad := range []string{"", "fleet_", s[:len(s)-1], s + "0", "fleex" + s[5:], s[:10] + "-" + s[11:]} {
		is.True(!fleet.CheckSecret(bad))
	}
}

func TestChecksumIsCRC32(t *testing.T) {
	is := is.New(t)
	s := fleet.NewSecret()
	sum := crc32.ChecksumIEEE([]byte(s[6:38]))
	var want [6]byte
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for i := 5; i >= 0; i-- {
		want[i] = base62[sum%62]
		sum /= 62
	}
	is.Equal(s[38:], string(want[:])) // base62 CRC-32 of the random part, as scanners expect
}

func TestHashSecretIsSHA256(t *testing.T) {
	is := is.New(t)
	s := fleet.NewSecret()
	is.Equal(fleet.HashSecret(s), sha256.Sum256([]byte(s)))
	is.Equal(fleet.HashSecret("short"), sha256.Sum256([]byte("short")))
}

func TestPermissionsAllows(t *testing.T) {
	cases := []struct {
		held []string
		want string
		ok   bool
	}{
		{[]string{"*"}, "keys:write", true},
		{[]string{"vehicles:read"}, "vehicles:read", true},
		{[]string{"vehicles:write"}, "vehicles:read", true}, // write implies read
		{[]string{"vehicles:read"}, "vehicles:write", false},
		{[]string{"vehicles:write"}, "locations:read", false},
		{[]string{"locations:write"}, "vehicles:read", false},
		{[]string{"keys:write"}, "keys:read", true},
		{[]string{"events:read"}, "events:write", false},
		{nil, "vehicles:read", false},
		{[]string{"vehicles:write"}, "*", false},
	}
	for _, tc := range cases {
		is.New(t).Equal(fleet.Permissions(tc.held).Allows(tc.want), tc.ok)
	}
}

func TestPermissionsCovers(t *testing.T) {
	is := is.New(t)
	ps := fleet.Permissions{"vehicles:write", "keys:write"}
	is.True(ps.Covers([]string{"vehicles:read", "keys:read", "keys:write"}))
	is.True(!ps.Covers([]string{"*"}))
	is.True(!ps.Covers([]string{"alerts:read"}))
	is.True(fleet.Permissions{"*"}.Covers([]string{"*", "alerts:write"}))
}

func TestKeyStatus(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	is.Equal(fleet.Key{}.Status(now), fleet.KeyActive)
	is.Equal(fleet.Key{ExpiresAt: &later}.Status(now), fleet.KeyActive)
	is.Equal(fleet.Key{ExpiresAt: &later}.Status(later), fleet.KeyExpired) // expires at the instant
	is.Equal(fleet.Key{ExpiresAt: &later, RevokedAt: &now}.Status(now), fleet.KeyRevoked)
}

func TestIDs(t *testing.T) {
	is := is.New(t)
	prev := ""
	for range 1000 {
		id := fleet.NewID(fleet.PrefixVehicle)
		is.True(fleet.ValidID(fleet.PrefixVehicle, id))
		is.True(id > prev) // time-ordered
		prev = id
	}
	is.True(!fleet.ValidID(fleet.PrefixVehicle, "veh_"))
	is.True(!fleet.ValidID(fleet.PrefixKey, prev))                       // wrong prefix
	is.True(!fleet.ValidID(fleet.PrefixVehicle, prev[:len(prev)-1]+"!")) // not in the alphabet
	is.True(!fleet.ValidID(fleet.PrefixVehicle, prev+"0"))
}

func TestCursor(t *testing.T) {
	is := is.New(t)
	id := fleet.NewID(fleet.PrefixKey)
	got, ok := fleet.DecodeCursor(fleet.EncodeCursor(id))
	is.True(ok)
	is.Equal(got, id)
	for _, bad := range []string{"", "!!!", "bm9wZQ", fleet.EncodeCursor("")} {
		_, ok := fleet.DecodeCursor(bad)
		is.True(!ok)
	}
}

// A rotation's new key names the key it replaces; a key made otherwise
// replaces none.
func TestRotatedKeyNamesTheKeyItReplaces(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	is.Equal(nk.Key.Replaces, "")
	rot, err := svc.RotateKey(ctx, p, nk.Key.ID, time.Hour)
	is.NoErr(err)
	is.Equal(rot.Key.Replaces, nk.Key.ID)
	stored, err := svc.Key(ctx, p, rot.Key.ID)
	is.NoErr(err)
	is.Equal(stored.Replaces, nk.Key.ID)
}
