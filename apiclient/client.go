package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
)

const (
	// DefaultTimeout bounds each request unless WithTimeout says otherwise.
	DefaultTimeout = 30 * time.Second
	// DefaultUserAgent is sent unless WithUserAgent says otherwise.
	DefaultUserAgent = "stakeflow-apiclient/1"
	// DefaultValidatorStatusParam is the query parameter name endpoint 7
	// uses for the comma-separated vote accounts unless
	// WithValidatorStatusParam says otherwise.
	DefaultValidatorStatusParam = "voteAccounts"

	maxBodyBytes   = 16 << 20
	maxExcerptSize = 200
	redacted       = "[REDACTED]"
)

// Client calls the staking service. It is safe for concurrent use.
type Client struct {
	base        string // scheme://host[/prefix], no trailing slash
	token       string
	httpClient  *http.Client
	timeout     time.Duration
	userAgent   string
	log         *zap.Logger
	statusParam string
	now         func() time.Time
}

// Option configures a Client.
type Option func(*config) error

type config struct {
	token       string
	tokenFile   string
	httpClient  *http.Client
	timeout     time.Duration
	userAgent   string
	log         *zap.Logger
	statusParam string
	now         func() time.Time
}

// withClock sets the clock the client reads for durations, Retry-After dates
// and token reloads (time.Now by default).
func withClock(now func() time.Time) Option {
	return func(c *config) error {
		c.now = now
		return nil
	}
}

// WithToken sets the bearer token sent on every request.
func WithToken(token string) Option {
	return func(c *config) error {
		c.token = token
		return nil
	}
}

// WithTokenFile reads the bearer token from path when New runs; surrounding
// white space is trimmed. An empty file is an error wrapping ErrNoToken.
// It takes precedence over WithToken.
func WithTokenFile(path string) Option {
	return func(c *config) error {
		c.tokenFile = path
		return nil
	}
}

// WithHTTPClient sets the HTTP client (transport, proxies, TLS). The default
// is a new http.Client with the default transport.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return errors.New("apiclient: WithHTTPClient: nil *http.Client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithTimeout bounds each request (connect to last body byte); 0 disables
// the bound and leaves it to the context. Default DefaultTimeout.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("apiclient: WithTimeout: negative duration %s", d)
		}
		c.timeout = d
		return nil
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *config) error {
		c.userAgent = ua
		return nil
	}
}

// WithLogger sets the logger; requests are logged at debug level with method,
// path, status, requestId and duration (never headers or bodies). The default
// is a no-op logger.
func WithLogger(l *zap.Logger) Option {
	return func(c *config) error {
		if l == nil {
			l = zap.NewNop()
		}
		c.log = l
		return nil
	}
}

// WithValidatorStatusParam sets the name of endpoint 7's query parameter that
// carries the comma-separated vote accounts; the service interface does not
// name it. Default DefaultValidatorStatusParam ("voteAccounts").
func WithValidatorStatusParam(name string) Option {
	return func(c *config) error {
		if strings.TrimSpace(name) == "" {
			return errors.New("apiclient: WithValidatorStatusParam: empty parameter name")
		}
		c.statusParam = name
		return nil
	}
}

// New returns a client for the service at baseURL. baseURL is a prefix joined
// with the `/api/v1/...` paths, so both published address forms work:
// "https://host" gives https://host/api/v1/... and "https://host/api" gives
// https://host/api/api/v1/.... It must be http or https with a host, and
// carry no user info, query or fragment.
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	cfg := config{
		timeout:     DefaultTimeout,
		userAgent:   DefaultUserAgent,
		log:         zap.NewNop(),
		statusParam: DefaultValidatorStatusParam,
		now:         time.Now,
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	token := strings.TrimSpace(cfg.token)
	if cfg.tokenFile != "" {
		b, err := os.ReadFile(cfg.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("apiclient: reading token file %s: %w", cfg.tokenFile, err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return nil, fmt.Errorf("apiclient: token file %s is empty: %w", cfg.tokenFile, ErrNoToken)
		}
	}
	for _, r := range token {
		if r <= ' ' || r >= 0x7f {
			return nil, errors.New("apiclient: bearer token holds white space, control or non-ASCII characters")
		}
	}
	hc := cfg.httpClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{
		base:        base,
		token:       token,
		httpClient:  hc,
		timeout:     cfg.timeout,
		userAgent:   cfg.userAgent,
		log:         cfg.log,
		statusParam: cfg.statusParam,
		now:         cfg.now,
	}, nil
}

func parseBaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("apiclient: base URL %q: %w", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("apiclient: base URL %q: scheme must be http or https", raw)
	case u.Host == "":
		return "", fmt.Errorf("apiclient: base URL %q: host missing", raw)
	case u.User != nil:
		return "", errors.New("apiclient: base URL must not carry user info; use WithToken")
	case u.RawQuery != "" || u.ForceQuery:
		return "", fmt.Errorf("apiclient: base URL %q: query not allowed", raw)
	case u.Fragment != "":
		return "", fmt.Errorf("apiclient: base URL %q: fragment not allowed", raw)
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

// ResponseInfo receives what a call learnt about the last HTTP response it
// got, success or error. See WithResponseInfo.
type ResponseInfo struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// RequestID is the x-request-id header, or the error envelope's requestId
	// when the header is absent.
	RequestID string
	// RateLimit holds the rate-limit headers, nil when none were sent.
	RateLimit *RateLimit
	// Header is the full response header.
	Header http.Header
}

type responseInfoKey struct{}

// WithResponseInfo returns a context that makes the client fill *info with the
// details of each response received under it (the last one wins, so an
// iterator leaves the last page's). info is written by the calling goroutine
// only; do not share it across concurrent calls.
func WithResponseInfo(ctx context.Context, info *ResponseInfo) context.Context {
	return context.WithValue(ctx, responseInfoKey{}, info)
}

// request describes one call.
type request struct {
	method string
	path   string // escaped, starts with /api/v1/
	query  url.Values
	body   any
}

// do sends req and decodes the success result into out (when out is non-nil).
func (c *Client) do(ctx context.Context, req request, out any) error {
	if c.token == "" {
		return fmt.Errorf("apiclient: %s %s: %w", req.method, req.path, ErrNoToken)
	}
	var body io.Reader
	if req.body != nil {
		b, err := json.Marshal(req.body)
		if err != nil {
			return fmt.Errorf("apiclient: %s %s: encoding request body: %w", req.method, req.path, err)
		}
		body = bytes.NewReader(b)
	}
	target := c.base + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return fmt.Errorf("apiclient: %s %s: building request: %w", req.method, req.path, err)
	}
	hreq.Header.Set("Authorization", "Bearer "+c.token)
	hreq.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		hreq.Header.Set("User-Agent", c.userAgent)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}

	start := c.now()
	resp, err := c.httpClient.Do(hreq)
	if err != nil {
		c.log.Debug("staking api request failed",
			zap.String("method", req.method), zap.String("path", req.path),
			zap.Duration("duration", c.now().Sub(start)), zap.String("error", c.redact(err.Error())))
		return &TransportError{Method: req.method, Path: req.path, Err: c.redactErr(err)}
	}
	defer resp.Body.Close()
	raw, readErr := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))

	requestID := resp.Header.Get("X-Request-Id")
	rl := parseRateLimit(resp.Header, c.now())
	info, _ := ctx.Value(responseInfoKey{}).(*ResponseInfo)
	if info != nil {
		*info = ResponseInfo{StatusCode: resp.StatusCode, RequestID: requestID, RateLimit: rl, Header: resp.Header.Clone()}
	}
	c.log.Debug("staking api request",
		zap.String("method", req.method), zap.String("path", req.path),
		zap.Int("status", resp.StatusCode), zap.String("requestId", requestID),
		zap.Duration("duration", c.now().Sub(start)))

	meta := responseMeta{
		method: req.method, path: req.path, status: resp.StatusCode,
		contentType: resp.Header.Get("Content-Type"), requestID: requestID, rateLimit: rl,
	}
	if readErr != nil {
		return &TransportError{Method: req.method, Path: req.path, Err: fmt.Errorf("reading response body: %w", readErr)}
	}
	if len(raw) > maxBodyBytes {
		return meta.unexpected(c.redactBytes(raw[:maxExcerptSize]), fmt.Errorf("body larger than %d bytes", maxBodyBytes))
	}
	err = decodeEnvelope(meta, c.redactBytes(raw), out)
	if info != nil && info.RequestID == "" {
		info.RequestID = RequestIDOf(err)
	}
	return err
}

// redact removes the token from s (defence against a server or proxy that
// echoes it).
func (c *Client) redact(s string) string {
	if c.token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.token, redacted)
}

func (c *Client) redactBytes(b []byte) []byte {
	if c.token == "" || !bytes.Contains(b, []byte(c.token)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(c.token), []byte(redacted))
}

func (c *Client) redactErr(err error) error {
	if c.token == "" || !strings.Contains(err.Error(), c.token) {
		return err
	}
	return redactedError{msg: c.redact(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// responseMeta is what the decoder knows about the response besides its body.
type responseMeta struct {
	method, path string
	status       int
	contentType  string
	requestID    string
	rateLimit    *RateLimit
}

func (m responseMeta) unexpected(body []byte, err error) *UnexpectedResponseError {
	return &UnexpectedResponseError{
		Method: m.method, Path: m.path, StatusCode: m.status, ContentType: m.contentType,
		Excerpt: excerpt(body), RequestID: m.requestID, RateLimit: m.rateLimit, Err: err,
	}
}

// excerpt returns the start of body as printable text.
func excerpt(body []byte) string {
	if len(body) > maxExcerptSize {
		body = body[:maxExcerptSize]
	}
	var b strings.Builder
	for len(body) > 0 {
		r, size := utf8.DecodeRune(body)
		body = body[size:]
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune('\uFFFD')
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < ' ' || r == 0x7f:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// wireEnvelope is either envelope; fields absent from one form stay empty.
type wireEnvelope struct {
	Error     json.RawMessage `json:"error"`
	Result    json.RawMessage `json:"result"`
	RequestID *string         `json:"requestId"`
	Timestamp json.RawMessage `json:"timestamp"`
}

// wireError is the error object, decoded leniently so that an odd code or
// message still yields an *APIError.
type wireError struct {
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message json.RawMessage `json:"message"`
	Name    json.RawMessage `json:"name"`
	Errors  json.RawMessage `json:"errors"`
}

var (
	errNotEnvelope   = errors.New("body is not a JSON envelope")
	errEmptyBody     = errors.New("empty body")
	errNoResult      = errors.New("success envelope without result")
	errNoErrorObject = errors.New("error status without an error object")
)

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// decodeEnvelope turns a response into out (2xx with a success envelope), an
// *APIError (an error envelope, whatever the status) or an
// *UnexpectedResponseError (anything else). It never panics.
func decodeEnvelope(m responseMeta, body []byte, out any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return m.unexpected(body, errEmptyBody)
	}
	var env wireEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return m.unexpected(body, fmt.Errorf("%w: %w", errNotEnvelope, err))
	}
	if !isNull(env.Error) {
		return decodeAPIError(m, body, env)
	}
	if m.status < 200 || m.status > 299 {
		return m.unexpected(body, errNoErrorObject)
	}
	if env.Result == nil {
		return m.unexpected(body, errNoResult)
	}
	if out == nil {
		return nil
	}
	if _, raw := out.(*json.RawMessage); isNull(env.Result) && !raw {
		return m.unexpected(body, errNoResult)
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return m.unexpected(body, fmt.Errorf("decoding result: %w", err))
	}
	return nil
}

func decodeAPIError(m responseMeta, body []byte, env wireEnvelope) error {
	var we wireError
	if err := json.Unmarshal(env.Error, &we); err != nil {
		return m.unexpected(body, fmt.Errorf("error field is not an object: %w", err))
	}
	e := &APIError{
		Method:     m.method,
		Path:       m.path,
		StatusCode: m.status,
		Name:       rawText(we.Name),
		Code:       rawInt32(we.Code),
		Type:       rawText(we.Type),
		Message:    rawText(we.Message),
		RequestID:  m.requestID,
		RateLimit:  m.rateLimit,
	}
	if env.RequestID != nil && *env.RequestID != "" {
		e.RequestID = *env.RequestID
	}
	if ts := rawText(env.Timestamp); ts != "" {
		if t, err := ParseDateTime(ts); err == nil {
			e.Timestamp = t
		}
	}
	if !isNull(we.Errors) {
		var list []ValidationError
		if err := json.Unmarshal(we.Errors, &list); err == nil {
			e.Errors = list
		} else {
			e.Errors = lenientValidationErrors(we.Errors)
		}
	}
	return e
}

// lenientValidationErrors keeps what it can of an `errors` array whose
// entries are not exactly {property: string, constraints: {string: string}}.
func lenientValidationErrors(raw json.RawMessage) []ValidationError {
	var items []struct {
		Property    json.RawMessage            `json:"property"`
		Constraints map[string]json.RawMessage `json:"constraints"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]ValidationError, 0, len(items))
	for _, it := range items {
		v := ValidationError{Property: rawText(it.Property)}
		if len(it.Constraints) > 0 {
			v.Constraints = make(map[string]string, len(it.Constraints))
			for k, c := range it.Constraints {
				v.Constraints[k] = rawText(c)
			}
		}
		out = append(out, v)
	}
	return out
}

// rawText returns a JSON string's value, or the compact JSON text of any other
// value ("" for null or absent).
func rawText(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// rawInt32 returns an integer code given as a JSON number or numeric string;
// 0 otherwise.
func rawInt32(raw json.RawMessage) int32 {
	var n int32
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if json.Unmarshal([]byte(strings.TrimSpace(s)), &n) == nil {
			return n
		}
	}
	return 0
}
