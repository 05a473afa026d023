package secret

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/matryer/is"
)

var (
	keyA = bytes.Repeat([]byte{0xa1}, 32)
	keyB = bytes.Repeat([]byte{0xb2}, 32)
)

func mustKeys(t *testing.T, keys ...[]byte) *Keys {
	t.Helper()
	k, err := NewKeys(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseKeys(t *testing.T) {
	is := is.New(t)
	a, b := NewKey(), NewKey()
	is.True(a != b)
	k, err := ParseKeys([]byte("# newest first\n" + b + "\n\n  " + a + "  \n"))
	is.NoErr(err)
	ka, err := ParseKeys([]byte(a))
	is.NoErr(err)
	kb, err := ParseKeys([]byte(b))
	is.NoErr(err)
	is.Equal(k.IDs(), []string{kb.IDs()[0], ka.IDs()[0]})
	is.Equal(k.SealingID(), kb.IDs()[0])
	for name, text := range map[string]string{
		"empty":     "# nothing\n",
		"not b64":   "not base64!\n",
		"too short": "c2hvcnQ=\n",
		"twice":     a + "\n" + a + "\n",
	} {
		_, err := ParseKeys([]byte(text))
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestNewKeysRefuses(t *testing.T) {
	is := is.New(t)
	_, err := NewKeys()
	is.Equal(err.Error(), "no secret key given")
	_, err = NewKeys(keyA, keyA[:31])
	is.Equal(err.Error(), "secret key 2 is 31 bytes, want 32")
	_, err = NewKeys(keyA, keyB, keyA)
	is.Equal(err.Error(), "secret key 3 is given twice")
}

// A value sealed under the first key names it, hides the plain text, and
// opens only with the data it was bound to and with a key ring that holds
// its key; a ring whose first key is another still opens it.
func TestSealAndOpen(t *testing.T) {
	is := is.New(t)
	a := mustKeys(t, keyA)
	ad := []byte("whk_1")
	v := a.Seal(ad, "whsec_the_secret")
	is.True(IsSealed(v))
	is.True(!IsSealed("whsec_the_secret"))
	is.True(strings.HasPrefix(v, "sealed:v1:"+a.IDs()[0]+":"))
	is.Equal(SealedKeyID(v), a.IDs()[0])
	is.True(!strings.Contains(v, "the_secret"))
	is.True(a.Seal(ad, "whsec_the_secret") != v) // a fresh nonce each time
	plain, err := a.Open(ad, v)
	is.NoErr(err)
	is.Equal(plain, "whsec_the_secret")

	_, err = a.Open([]byte("whk_2"), v)
	is.True(strings.Contains(err.Error(), "does not open: it was altered or moved")) // bound to its data
	altered := v[:len(v)-2] + "AA"
	if altered == v {
		altered = v[:len(v)-2] + "BB"
	}
	_, err = a.Open(ad, altered)
	is.True(err != nil) // altered
	_, err = a.Open(ad, "sealed:v1:"+a.IDs()[0]+":!!")
	is.Equal(err.Error(), "a sealed value is malformed")
	_, err = a.Open(ad, "whsec_plain")
	is.Equal(err.Error(), "not a sealed value")

	ba := mustKeys(t, keyB, keyA)
	plain, err = ba.Open(ad, v)
	is.NoErr(err) // an older key of the ring opens what it sealed
	is.Equal(plain, "whsec_the_secret")
	is.Equal(SealedKeyID(ba.Seal(ad, "x")), ba.IDs()[0]) // the first seals
	b := mustKeys(t, keyB)
	_, err = b.Open(ad, v)
	is.Equal(err.Error(), "a value is sealed under key "+a.IDs()[0]+", which is not among the server's keys ("+b.IDs()[0]+")")
}

// Values sealed as they have been stored (webhook signing secrets, key ids)
// still open: the format and the key ids do not change.
func TestStoredValuesOpen(t *testing.T) {
	is := is.New(t)
	k := mustKeys(t, keyA, keyB)
	is.Equal(k.IDs(), []string{"36a0d7cf", "cc4906ab"})
	plain, err := k.Open([]byte("fleet webhook signing secret\x00whk_1"), "sealed:v1:36a0d7cf:gwkSZNYgIXfjDWbyv2vlsjMtrEOXNpUAjU5LtNAE5SjqKpELhQNZUyM8ruo")
	is.NoErr(err)
	is.Equal(plain, "whsec_the_secret")

	key := Derive("fleet_the_key_secret", "fleet idempotency response seal v1")
	is.Equal(hex.EncodeToString(key[:]), "ccd551e37997d36ca5de3b005c3123360959bc13df7dd8767aa8f38c47712446")
	stored, err := hex.DecodeString("019ba7bfc102ff28d378042b1c1763f6e6c0c85c0109a439e8b8fb9664c0bdf4e1f9bdf25c81a803")
	is.NoErr(err)
	body, ok := OpenBytes(key, []byte("key_1\x00idem-1\x00201"), stored)
	is.True(ok)
	is.Equal(string(body), `{"ok":true}`)
}

// SealBytes: version 1, a fresh nonce, the plain text hidden; OpenBytes
// opens it with its key and data only, and refuses what is altered, short
// or of another version.
func TestSealBytes(t *testing.T) {
	is := is.New(t)
	key := Derive("secret one", "label")
	is.True(key != Derive("secret two", "label"))
	is.True(key != Derive("secret one", "other label"))
	ad := []byte("record")
	plain := []byte(`{"secret":"fleet_abc"}`)
	v := SealBytes(key, ad, plain)
	is.Equal(v[0], byte(1))
	is.True(!bytes.Contains(v, []byte("fleet_abc")))
	is.True(!bytes.Equal(SealBytes(key, ad, plain), v)) // a fresh nonce each time
	got, ok := OpenBytes(key, ad, v)
	is.True(ok)
	is.Equal(got, plain)
	for name, c := range map[string]struct {
		key       [KeyLen]byte
		ad, value []byte
	}{
		"another key":  {Derive("secret two", "label"), ad, v},
		"other data":   {key, []byte("record 2"), v},
		"altered":      {key, ad, append(bytes.Clone(v[:len(v)-1]), v[len(v)-1]^1)},
		"short":        {key, ad, v[:20]},
		"version 2":    {key, ad, append([]byte{2}, v[1:]...)},
		"empty":        {key, ad, nil},
		"plain stored": {key, ad, plain},
	} {
		if _, ok := OpenBytes(c.key, c.ad, c.value); ok {
			t.Errorf("%s: opened", name)
		}
	}
}
