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
	"strings"
	"sync"
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
	httpClient  *http.Client
	timeout     time.Duration
	userAgent   string
	log         *zap.Logger
	statusParam string
	now         func() time.Time
	observer    Observer

	// tokenFile and reloadEvery are fixed at New (see WithTokenFile).
	tokenFile   string
	reloadEvery time.Duration
	// reloadMu is held while the token file is read, so that one request
	// reads it at a time.
	reloadMu sync.Mutex
	// mu guards the fields below.
	mu           sync.Mutex
	token        string
	tokenReadAt  time.Time
	failingSince time.Time // zero while the service accepts the token
}

// Option configures a Client.
type Option func(*config) error

type config struct {
	token       string
	tokenFile   string
	reloadEvery time.Duration
	httpClient  *http.Client
	timeout     time.Duration
	userAgent   string
	log         *zap.Logger
	statusParam string
	now         func() time.Time
	observer    Observer
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
// white space is trimmed. An empty or unreadable file is an error of New (an
// empty one wraps ErrNoToken). It takes precedence over WithToken.
//
// The file is read again, so that a rotated token is picked up without a
// restart: lazily before a request once the last read is older than the
// reload interval (WithTokenReloadInterval), and at once when the service
// refuses the token with 401. If the file then holds a different token, the
// refused request is sent once more, with the same body bytes, under the new
// token (safe for every endpoint: a broadcast re-sends the same signed
// bytes). A reload that finds the file unreadable, empty or holding an
// invalid token keeps the current token and logs the failure at warn level
// (path and error, never the token).
//
// Deployments should replace the file atomically (write a new file and
// rename it over the old one, as Kubernetes does for mounted secrets), so a
// reload never reads it half-written.
func WithTokenFile(path string) Option {
	return func(c *config) error {
		c.tokenFile = path
		return nil
	}
}

// WithTokenReloadInterval sets how old the last read of the token file may
// be before a request reads it again (DefaultTokenReloadInterval unless set);
// 0 turns the periodic read off, leaving only the read after a 401. It has
// no effect without WithTokenFile.
func WithTokenReloadInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("apiclient: WithTokenReloadInterval: negative duration %s", d)
		}
		c.reloadEvery = d
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

// WithTimeout bounds each HTTP request (connect to last body byte; a resend
// after a 401 gets its own bound); 0 disables the bound and leaves it to the
// context. Default DefaultTimeout.
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
		reloadEvery: DefaultTokenReloadInterval,
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	token := strings.TrimSpace(cfg.token)
	var readAt time.Time
	if cfg.tokenFile != "" {
		readAt = cfg.now()
		token, err = readTokenFile(cfg.tokenFile)
		if err != nil {
			return nil, err
		}
	} else if err := checkToken(token); err != nil {
		return nil, fmt.Errorf("apiclient: %w", err)
	}
	hc := cfg.httpClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{
		base:        base,
		httpClient:  hc,
		timeout:     cfg.timeout,
		userAgent:   cfg.userAgent,
		log:         cfg.log,
		statusParam: cfg.statusParam,
		now:         cfg.now,
		observer:    cfg.observer,
		tokenFile:   cfg.tokenFile,
		reloadEvery: cfg.reloadEvery,
		token:       token,
		tokenReadAt: readAt,
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
	endpoint Endpoint
	method   string
	path     string // escaped, starts with /api/v1/
	query    url.Values
	body     any
}

// do sends req and decodes the success result into out (when out is non-nil),
// then tells the observer (WithObserver) of the call: every call to the
// service goes through here.
func (c *Client) do(ctx context.Context, req request, out any) error {
	start := c.now()
	var status int
	err := c.exchange(ctx, req, out, &status)
	if c.observer != nil {
		c.observer(ctx, Call{Endpoint: req.endpoint, StatusCode: status, Duration: c.now().Sub(start), Err: err})
	}
	return err
}

// exchange sends req and decodes the success result into out (when out is
// non-nil), setting *status to the HTTP status of the response it got. A
// request the service refuses with 401 is sent once more when the token file
// holds a new token; see WithTokenFile.
func (c *Client) exchange(ctx context.Context, req request, out any, status *int) error {
	token := c.currentToken()
	if token == "" {
		return fmt.Errorf("apiclient: %s %s: %w", req.method, req.path, ErrNoToken)
	}
	var payload []byte
	if req.body != nil {
		b, err := json.Marshal(req.body)
		if err != nil {
			return fmt.Errorf("apiclient: %s %s: encoding request body: %w", req.method, req.path, err)
		}
		payload = b
	}
	target := c.base + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}

	sent := secrets{token}
	resp, err := c.send(ctx, req, target, payload, token, sent)
	if err == nil && resp.status == http.StatusUnauthorized {
		if next, ok := c.tokenAfterRefusal(token); ok {
			c.log.Info("staking api refused the token; sending the request again with the new token from the file",
				zap.String("method", req.method), zap.String("path", req.path), zap.String("requestId", resp.requestID))
			sent = append(sent, next)
			resp, err = c.send(ctx, req, target, payload, next, sent)
		}
	}
	if err != nil {
		return err
	}
	*status = resp.status
	c.noteAuth(resp.status, req, resp.requestID)

	info, _ := ctx.Value(responseInfoKey{}).(*ResponseInfo)
	if info != nil {
		*info = ResponseInfo{StatusCode: resp.status, RequestID: resp.requestID, RateLimit: resp.rateLimit, Header: resp.header.Clone()}
	}
	meta := responseMeta{
		method: req.method, path: req.path, status: resp.status,
		contentType: resp.header.Get("Content-Type"), requestID: resp.requestID, rateLimit: resp.rateLimit,
	}
	if resp.readErr != nil {
		return &TransportError{Method: req.method, Path: req.path, Err: sent.redactErr(fmt.Errorf("reading response body: %w", resp.readErr))}
	}
	body := sent.redactBytes(resp.body)
	if len(resp.body) > maxBodyBytes {
		return meta.unexpected(body, fmt.Errorf("body larger than %d bytes", maxBodyBytes))
	}
	err = decodeEnvelope(meta, body, out)
	if info != nil && info.RequestID == "" {
		info.RequestID = RequestIDOf(err)
	}
	return err
}

// response is what one HTTP exchange returned.
type response struct {
	status    int
	header    http.Header
	body      []byte // at most maxBodyBytes+1 bytes
	readErr   error  // failure reading the body
	requestID string
	rateLimit *RateLimit
}

// send makes one HTTP request with token, bounded by the client's timeout,
// and reads the whole response. A failure to get a response is a
// *TransportError with every token in sent redacted.
func (c *Client) send(ctx context.Context, req request, target string, payload []byte, token string, sent secrets) (*response, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("apiclient: %s %s: building request: %w", req.method, req.path, err)
	}
	hreq.Header.Set("Authorization", "Bearer "+token)
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
			zap.Duration("duration", c.now().Sub(start)), zap.String("error", sent.redact(err.Error())))
		return nil, &TransportError{Method: req.method, Path: req.path, Err: sent.redactErr(err)}
	}
	defer resp.Body.Close()
	raw, readErr := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	out := &response{
		status:    resp.StatusCode,
		header:    resp.Header,
		body:      raw,
		readErr:   readErr,
		requestID: resp.Header.Get("X-Request-Id"),
		rateLimit: parseRateLimit(resp.Header, c.now()),
	}
	c.log.Debug("staking api request",
		zap.String("method", req.method), zap.String("path", req.path),
		zap.Int("status", out.status), zap.String("requestId", out.requestID),
		zap.Duration("duration", c.now().Sub(start)))
	return out, nil
}

// secrets are the tokens a call sent; redaction removes them from anything
// the call reports (defence against a server or proxy that echoes them).
type secrets []string

func (s secrets) redact(str string) string {
	for _, t := range s {
		if t != "" {
			str = strings.ReplaceAll(str, t, redacted)
		}
	}
	return str
}

func (s secrets) redactBytes(b []byte) []byte {
	for _, t := range s {
		if t != "" && bytes.Contains(b, []byte(t)) {
			b = bytes.ReplaceAll(b, []byte(t), []byte(redacted))
		}
	}
	return b
}

func (s secrets) redactErr(err error) error {
	msg := err.Error()
	if red := s.redact(msg); red != msg {
		return redactedError{msg: red, err: err}
	}
	return err
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
		return m.unexpected(body, fmt.Errorf("decoding result: %w", namedField(err)))
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
