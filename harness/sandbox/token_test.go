//go:build integration

package sandbox

import (
	"context"
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

// TestTokenRotation: after a rotation, tokens minted before are answered 401
// WrongTokenException and the token the rotation returns is accepted, from
// Go and from the control API; a rotation without a subject changes nothing.
func TestTokenRotation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := Start(ctx, Config{TokenSecret: testSecret, Runtime: fastRuntime()})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, sb.Close()) })
	ssv := sb.URL() + "/api/v1/eth/staking/ssv/request"
	accepted := func(t *testing.T, token string) {
		t.Helper()
		r := do(t, http.MethodGet, ssv, token, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	}
	refused := func(t *testing.T, token string) {
		t.Helper()
		requireErrorEnvelope(t, do(t, http.MethodGet, ssv, token, nil), http.StatusUnauthorized, nameWrongToken, codeWrongToken, typeAuthentication)
	}

	before := mintToken(t, "ops")
	accepted(t, before)
	current, err := sb.MintToken("ops", time.Hour)
	require.NoError(t, err)
	accepted(t, current)

	rotated, err := sb.RotateToken("ops", time.Hour)
	require.NoError(t, err)
	refused(t, before)
	refused(t, current)
	accepted(t, rotated)
	minted, err := sb.MintToken("other", 0)
	require.NoError(t, err)
	accepted(t, minted)

	r := do(t, http.MethodPost, sb.URL()+"/sandbox/token/rotate", "", map[string]any{"subject": "ops", "ttl": "1h"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	res := r.Body["result"].(map[string]any)
	assert.Equal(t, "ops", res["subject"])
	viaControl, _ := res["token"].(string)
	require.NotEmpty(t, viaControl)
	refused(t, rotated)
	accepted(t, viaControl)

	// No subject: refused, and the secret stays.
	_, err = sb.RotateToken("", time.Hour)
	require.ErrorIs(t, err, ErrEmptySubject)
	r = do(t, http.MethodPost, sb.URL()+"/sandbox/token/rotate", "", map[string]any{"ttl": "1h"})
	requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
	r = do(t, http.MethodPost, sb.URL()+"/sandbox/token/rotate", "", map[string]any{"subject": "ops", "ttl": "-1s"})
	requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
	accepted(t, viaControl)
	requireErrorEnvelope(t, do(t, http.MethodGet, ssv, "", nil), http.StatusUnauthorized, nameNoToken, codeNoToken, typeAuthentication)
}
