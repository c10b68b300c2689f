// Package codecserver serves the payload codec over HTTP as the Temporal Web UI and CLI call it:
// POST /encode and /decode with a JSON body {"payloads": [...]}, answered in kind
// (converter.NewPayloadCodecHTTPHandler). It decodes leniently (codec.NewLenient): payloads written
// in clear come back as they are, so a history written before encryption stays readable.
//
// Every request is authenticated by a token: in the Authorization header ("Bearer <token>", as
// `temporal --codec-auth` sends it), or as the first segment of the path (/<token>/decode) for a Web
// UI that can be given an endpoint but not a header. A request whose Origin is not one of the
// configured UI origins is refused, preflight included; one without an Origin (the CLI) is judged
// by its token alone. /healthz and /readyz answer without a token and say nothing of the keys.
//
// Config and Run are cmd/codec-server: its flags, the token file (ReadTokens), the HTTP server with
// its timeouts, a reload of the keyset, the tokens and the TLS pair on request (SIGHUP), and a
// graceful stop. docs/codec-server.md says how to run it and rotate its keys and tokens.
package codecserver

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/codec"
)

// MaxBody bounds a request's body: Temporal refuses payloads past 2 MB, and the Web UI decodes a
// page of events at a time.
const MaxBody = 32 << 20

// Options configure the server.
type Options struct {
	// Keys is the keyset payloads are sealed and opened with.
	Keys *codec.Keyset
	// Tokens are the accepted tokens (at least one, each at least MinTokenLength bytes).
	Tokens []string
	// UIOrigins are the origins (scheme://host[:port]) a browser may call from.
	UIOrigins []string
	// Logger logs refusals (never a token or a payload).
	Logger *zap.Logger
}

// MinTokenLength is the shortest token accepted: 128 bits as hex.
const MinTokenLength = 32

// New is the server's handler.
func New(o Options) (http.Handler, error) {
	if o.Keys == nil {
		return nil, errors.New("no payload keyset")
	}
	if len(o.Tokens) == 0 {
		return nil, errors.New("no token: every request to the codec server is authenticated")
	}
	for i, t := range o.Tokens {
		if len(t) < MinTokenLength {
			return nil, fmt.Errorf("token %d has %d characters; at least %d", i+1, len(t), MinTokenLength)
		}
		if strings.ContainsAny(t, "/ \t\r\n") {
			return nil, fmt.Errorf("token %d holds a slash or a space", i+1)
		}
	}
	origins := make([]string, 0, len(o.UIOrigins))
	for _, raw := range o.UIOrigins {
		origin, err := CheckOrigin(raw)
		if err != nil {
			return nil, err
		}
		origins = append(origins, origin)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	return &server{
		codec:   converter.NewPayloadCodecHTTPHandler(codec.NewLenient(o.Keys)),
		tokens:  o.Tokens,
		origins: origins,
		logger:  o.Logger,
	}, nil
}

// CheckOrigin returns the origin form of raw (scheme://host[:port], no path), or why it is not one.
func CheckOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", fmt.Errorf("UI origin %q: want scheme://host[:port], as the browser sends it", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

type server struct {
	codec   http.Handler
	tokens  []string
	origins []string
	logger  *zap.Logger
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz", "/readyz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !slices.Contains(s.origins, origin) {
			s.logger.Warn("Codec request from an origin not configured refused", zap.String("origin", origin))
			http.Error(w, fmt.Sprintf("origin %s is not allowed to call this codec server", origin), http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Allow-Credentials", "true")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Namespace")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	path, ok := s.authenticate(r)
	if !ok {
		s.logger.Warn("Codec request without a valid token refused", zap.String("remote", r.RemoteAddr))
		w.Header().Set("WWW-Authenticate", `Bearer realm="stakeflow-codec"`)
		http.Error(w, "a valid token is required (Authorization: Bearer <token>)", http.StatusUnauthorized)
		return
	}
	if path != "/encode" && path != "/decode" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	r2 := r.Clone(r.Context())
	r2.URL.Path = path
	s.codec.ServeHTTP(w, r2)
}

// authenticate finds the token in the Authorization header or the path's first segment, and
// returns the path without that segment.
func (s *server) authenticate(r *http.Request) (string, bool) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		token, found := strings.CutPrefix(auth, "Bearer ")
		return r.URL.Path, found && s.valid(token)
	}
	rest := strings.TrimPrefix(r.URL.Path, "/")
	token, path, found := strings.Cut(rest, "/")
	if !found {
		return "", false
	}
	return "/" + path, s.valid(token)
}

func (s *server) valid(token string) bool {
	ok := 0
	for _, t := range s.tokens {
		ok |= subtle.ConstantTimeCompare([]byte(token), []byte(t))
	}
	return ok == 1
}
