package codecserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/stakeflow/stakeflow/codec"
)

const (
	token = "0123456789abcdef0123456789abcdef"
	ui    = "http://127.0.0.1:8233"
)

func serve(t *testing.T) (*httptest.Server, *codec.Keyset) {
	t.Helper()
	f, err := codec.NewKeyFile("k1")
	require.NoError(t, err)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	keys, err := codec.ParseKeyset(b)
	require.NoError(t, err)
	h, err := New(Options{Keys: keys, Tokens: []string{token}, UIOrigins: []string{ui}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, keys
}

// body is the JSON the Web UI and the CLI post: {"payloads": [...]} in protojson.
func body(t *testing.T, payloads ...*commonpb.Payload) string {
	t.Helper()
	b, err := protojson.Marshal(&commonpb.Payloads{Payloads: payloads})
	require.NoError(t, err)
	return string(b)
}

func post(t *testing.T, url, origin, auth, payload string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(payload))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func decoded(t *testing.T, raw string) []*commonpb.Payload {
	t.Helper()
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal([]byte(raw), &out))
	return out.Payloads
}

func TestDecodesWhatTheWorkerSealedWithAValidToken(t *testing.T) {
	srv, keys := serve(t)
	clear, err := converter.GetDefaultDataConverter().ToPayload("Vote111111111111111111111111111111111111111")
	require.NoError(t, err)
	sealed, err := codec.New(keys).Encode([]*commonpb.Payload{clear})
	require.NoError(t, err)

	for name, target := range map[string]struct{ url, auth string }{
		"bearer header": {srv.URL + "/decode", "Bearer " + token},
		"token in path": {srv.URL + "/" + token + "/decode", ""},
	} {
		t.Run(name, func(t *testing.T) {
			resp, out := post(t, target.url, ui, target.auth, body(t, sealed...))
			require.Equal(t, http.StatusOK, resp.StatusCode, out)
			require.Equal(t, ui, resp.Header.Get("Access-Control-Allow-Origin"))
			got := decoded(t, out)
			require.Len(t, got, 1)
			require.Equal(t, clear.Data, got[0].Data)
		})
	}
	// A clear payload (written before encryption) comes back as it is.
	resp, out := post(t, srv.URL+"/decode", "", "Bearer "+token, body(t, clear))
	require.Equal(t, http.StatusOK, resp.StatusCode, out)
	require.Equal(t, clear.Data, decoded(t, out)[0].Data)
	// Encode seals under the current key.
	resp, out = post(t, srv.URL+"/encode", "", "Bearer "+token, body(t, clear))
	require.Equal(t, http.StatusOK, resp.StatusCode, out)
	enc := decoded(t, out)[0]
	require.Equal(t, "k1", string(enc.Metadata[codec.MetadataKeyID]))
	require.NotContains(t, string(enc.Data), "Vote111")
}

func TestRefusesWithoutAValidToken(t *testing.T) {
	srv, _ := serve(t)
	for name, target := range map[string]struct{ url, auth string }{
		"no token":              {srv.URL + "/decode", ""},
		"wrong bearer":          {srv.URL + "/decode", "Bearer " + strings.Repeat("f", 32)},
		"token without Bearer":  {srv.URL + "/decode", token},
		"wrong token in path":   {srv.URL + "/" + strings.Repeat("f", 32) + "/decode", ""},
		"token prefix in path":  {srv.URL + "/" + token[:31] + "/decode", ""},
		"header wins over path": {srv.URL + "/" + token + "/decode", "Bearer nope"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, out := post(t, target.url, "", target.auth, body(t))
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, out)
			require.NotContains(t, out, token)
		})
	}
}

func TestRefusesAnotherOrigin(t *testing.T) {
	srv, _ := serve(t)
	resp, out := post(t, srv.URL+"/decode", "http://evil.example", "Bearer "+token, body(t))
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, out, "http://evil.example")
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))

	for origin, want := range map[string]int{ui: http.StatusNoContent, "http://evil.example": http.StatusForbidden, "http://127.0.0.1:8234": http.StatusForbidden} {
		req, err := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, origin)
		if want == http.StatusNoContent {
			require.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
			require.Contains(t, strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "authorization")
		}
	}
}

func TestHealthWithoutToken(t *testing.T) {
	srv, _ := serve(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(srv.URL + p)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	f, err := codec.NewKeyFile("k1")
	require.NoError(t, err)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	keys, err := codec.ParseKeyset(b)
	require.NoError(t, err)
	for name, c := range map[string]struct {
		o    Options
		want string
	}{
		"no keyset":          {Options{Tokens: []string{token}}, "no payload keyset"},
		"no token":           {Options{Keys: keys}, "no token"},
		"short token":        {Options{Keys: keys, Tokens: []string{"short"}}, "at least 32"},
		"origin with a path": {Options{Keys: keys, Tokens: []string{token}, UIOrigins: []string{"http://ui.example/app"}}, "scheme://host"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(c.o)
			require.ErrorContains(t, err, c.want)
		})
	}
}
