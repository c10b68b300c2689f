package sandbox

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMintTokenAndAuthenticate(t *testing.T) {
	_, err := MintToken(nil, "x", time.Hour)
	assert.ErrorIs(t, err, ErrEmptySecret)
	_, err = MintToken(testSecret, "", time.Hour)
	assert.ErrorIs(t, err, ErrEmptySubject)

	good, err := MintToken(testSecret, "alice", time.Hour)
	require.NoError(t, err)
	forever, err := MintToken(testSecret, "bob", 0)
	require.NoError(t, err)
	hs512, err := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.RegisteredClaims{Subject: "eve"}).SignedString(testSecret)
	require.NoError(t, err)
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.RegisteredClaims{Subject: "eve"}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	noSub, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{}).SignedString(testSecret)
	require.NoError(t, err)

	cases := []struct {
		name, header, subject, errName string
	}{
		{"valid", "Bearer " + good, "alice", ""},
		{"lower-case scheme", "bearer " + good, "alice", ""},
		{"no expiry", "Bearer " + forever, "bob", ""},
		{"missing", "", "", nameNoToken},
		{"other scheme", "Token " + good, "", nameNoToken},
		{"other algorithm", "Bearer " + hs512, "", nameWrongToken},
		{"alg none", "Bearer " + none, "", nameWrongToken},
		{"no subject", "Bearer " + noSub, "", nameWrongToken},
		{"tampered", "Bearer " + good[:len(good)-2] + "xx", "", nameWrongToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if c.header != "" {
				r.Header.Set("Authorization", c.header)
			}
			sub, aerr := authenticate(r, testSecret)
			if c.errName == "" {
				require.Nil(t, aerr)
				assert.Equal(t, c.subject, sub)
				return
			}
			require.NotNil(t, aerr)
			assert.Equal(t, c.errName, aerr.Name)
			assert.Equal(t, http.StatusUnauthorized, aerr.Status)
			assert.NotContains(t, aerr.Message, good[:20])
		})
	}
}
