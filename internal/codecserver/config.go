package codecserver

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/secretfile"
)

// DefaultListen is the codec server's address unless --listen says otherwise: loopback, one port
// above the worker's health server (127.0.0.1:8081), so both run on one host as they come.
const DefaultListen = "127.0.0.1:8082"

// Config is cmd/codec-server's configuration. Every field has a flag, an environment twin
// (STAKEFLOW_<FLAG>) and a key of the same name in the optional JSON file (--config).
type Config struct {
	ConfigFile string
	// Listen is the address the server listens on (port 0: a free one, logged).
	Listen string
	// PayloadKeyset is the keyset file (codec.LoadKeyset) the worker and the starter seal with.
	PayloadKeyset string
	// TokenFile holds the accepted tokens, one a line (several during a rotation; blank lines
	// are ignored), in a file of mode 0600 or stricter.
	TokenFile string
	// UIOrigins are the Web UI origins a browser may call from (--ui-origin, repeatable).
	UIOrigins OriginList
	// TLSCert and TLSKey, both or neither, serve HTTPS.
	TLSCert string
	TLSKey  string
	// StopTimeout is how long requests in flight get to finish on SIGTERM.
	StopTimeout time.Duration
	LogFormat   string
	LogLevel    string

	// Reload, when set, makes Run read the keyset, the tokens and the TLS pair again at every
	// receive (cmd/codec-server sends on SIGHUP); a reload that fails keeps the last good state.
	// No flag.
	Reload <-chan struct{} `json:"-"`
	// Listening, when set, receives the bound address once the server listens. No flag.
	Listening func(net.Addr) `json:"-"`
}

// Register adds the codec server's flags to fs.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.ConfigFile, "config", "", "JSON file of settings (keys are flag names)")
	fs.StringVar(&c.Listen, "listen", DefaultListen, "address of /encode, /decode, /healthz and /readyz (port 0: a free one, logged)")
	fs.StringVar(&c.PayloadKeyset, "payload-keyset", "", "keyset file (JSON, 0600) of the payload codec: the file the worker and the starter take as --payload-keyset")
	fs.StringVar(&c.TokenFile, "token-file", "", "file (0600) of the tokens a request must carry (Authorization: Bearer TOKEN, or /TOKEN/decode), one a line; blank lines are ignored")
	fs.Var(&c.UIOrigins, "ui-origin", "origin of a Web UI allowed to call from a browser (scheme://host[:port]; repeatable, or comma-separated)")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "certificate file (PEM) to serve HTTPS with (with --tls-key)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "private key file (PEM) of --tls-cert")
	fs.DurationVar(&c.StopTimeout, "stop-timeout", 10*time.Second, "how long requests in flight get to finish on stop")
	fs.StringVar(&c.LogFormat, "log-format", "json", "json or console")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
}

// Validate checks the configuration without reading a file; the error names every setting that
// is wrong.
func (c *Config) Validate() error {
	var errs []error
	if c.Listen == "" {
		errs = append(errs, errors.New("--listen is required"))
	} else if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("--listen %q: want host:port", c.Listen))
	}
	if c.PayloadKeyset == "" {
		errs = append(errs, errors.New("--payload-keyset is required: the keyset the worker seals payloads with"))
	}
	if c.TokenFile == "" {
		errs = append(errs, errors.New("--token-file is required: every request to the codec server is authenticated"))
	}
	for _, o := range c.UIOrigins {
		if _, err := CheckOrigin(o); err != nil {
			errs = append(errs, fmt.Errorf("--ui-origin: %w", err))
		}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key go together"))
	}
	if c.StopTimeout < 0 {
		errs = append(errs, errors.New("--stop-timeout must not be negative"))
	}
	return errors.Join(errs...)
}

// OriginList is the value of --ui-origin: each use adds its comma-separated origins.
type OriginList []string

// String implements flag.Value.
func (l *OriginList) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value.
func (l *OriginList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// ReadTokens reads a token file: mode 0600 or stricter, one token a line, blank lines ignored,
// at least one token. Errors name the file and the line, never a token.
func ReadTokens(path string) ([]string, error) {
	b, err := secretfile.Read(path)
	if err != nil {
		return nil, err
	}
	var tokens []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) < MinTokenLength {
			return nil, fmt.Errorf("%s line %d: a token of %d characters; at least %d (openssl rand -hex 32)", path, i+1, len(line), MinTokenLength)
		}
		if strings.ContainsAny(line, "/ \t") {
			return nil, fmt.Errorf("%s line %d: a token holds a slash or a space", path, i+1)
		}
		tokens = append(tokens, line)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%s holds no token", path)
	}
	return tokens, nil
}

// state is what a reload replaces: the handler over the keyset and tokens, and the TLS pair.
type state struct {
	handler http.Handler
	cert    *tls.Certificate
	keys    *codec.Keyset
	tokens  int
}

// load reads every file of the configuration.
func (c *Config) load(logger *zap.Logger) (*state, error) {
	keys, err := codec.LoadKeyset(c.PayloadKeyset)
	if err != nil {
		return nil, fmt.Errorf("--payload-keyset: %w", err)
	}
	tokens, err := ReadTokens(c.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	h, err := New(Options{Keys: keys, Tokens: tokens, UIOrigins: c.UIOrigins, Logger: logger})
	if err != nil {
		return nil, err
	}
	s := &state{handler: h, keys: keys, tokens: len(tokens)}
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		s.cert = &cert
	}
	return s, nil
}

// Run serves the codec until ctx is done, then lets requests in flight finish (StopTimeout).
// It refuses to start, before it listens, when a file is missing or wrong.
func Run(ctx context.Context, cfg Config, logger *zap.Logger) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	first, err := cfg.load(logger)
	if err != nil {
		return err
	}
	var cur atomic.Pointer[state]
	cur.Store(first)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", cfg.Listen, err)
	}
	if first.cert != nil {
		ln = tls.NewListener(ln, &tls.Config{
			MinVersion: tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				return cur.Load().cert, nil
			},
		})
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cur.Load().handler.ServeHTTP(w, r) }),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(logger.Named("http")),
	}
	logger.Info("Codec server listening", zap.String("codecAddr", ln.Addr().String()), zap.Bool("tls", first.cert != nil),
		zap.String("currentKey", first.keys.Current()), zap.Strings("keyIDs", first.keys.IDs()),
		zap.Int("tokens", first.tokens), zap.Strings("uiOrigins", cfg.UIOrigins))
	if cfg.Listening != nil {
		cfg.Listening(ln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	for {
		select {
		case err := <-served:
			return fmt.Errorf("codec server: %w", err)
		case <-cfg.Reload:
			next, err := cfg.load(logger)
			if err != nil {
				logger.Error("Reload failed; serving with the previous keyset and tokens", zap.Error(err))
				continue
			}
			cur.Store(next)
			logger.Info("Reloaded", zap.String("currentKey", next.keys.Current()), zap.Strings("keyIDs", next.keys.IDs()), zap.Int("tokens", next.tokens))
		case <-ctx.Done():
			logger.Info("Stopping: requests in flight get their time", zap.Duration("stopTimeout", cfg.StopTimeout))
			sctx, cancel := context.WithTimeout(context.Background(), cfg.StopTimeout)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				return fmt.Errorf("codec server stop: %w", err)
			}
			return nil
		}
	}
}
