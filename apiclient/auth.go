package apiclient

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"
)

// DefaultTokenReloadInterval is how old the last read of the token file may
// be before a request reads it again, unless WithTokenReloadInterval says
// otherwise.
const DefaultTokenReloadInterval = time.Minute

// Reasons for reading the token file again, as logged.
const (
	reloadDue     = "interval"
	reloadRefused = "refused"
)

var errTokenCharacters = errors.New("bearer token holds white space, control or non-ASCII characters")

// checkToken refuses a token that cannot be sent in a header as is. The
// error does not quote the token.
func checkToken(token string) error {
	for _, r := range token {
		if r <= ' ' || r >= 0x7f {
			return errTokenCharacters
		}
	}
	return nil
}

// readTokenFile returns the trimmed token held by path. An empty file is an
// error wrapping ErrNoToken. No error quotes the file's content.
func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("apiclient: reading token file %s: %w", path, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("apiclient: token file %s is empty: %w", path, ErrNoToken)
	}
	if err := checkToken(token); err != nil {
		return "", fmt.Errorf("apiclient: token file %s: %w", path, err)
	}
	return token, nil
}

// currentToken returns the token to send. When the token file is due for a
// read, the calling request reads it first; requests arriving while another
// one reads it send the token they find.
func (c *Client) currentToken() string {
	if c.tokenFile == "" || c.reloadEvery <= 0 {
		return c.loadToken()
	}
	if !c.reloadDue() || !c.reloadMu.TryLock() {
		return c.loadToken()
	}
	defer c.reloadMu.Unlock()
	if !c.reloadDue() { // another request read it meanwhile
		return c.loadToken()
	}
	return c.reloadToken(reloadDue)
}

// tokenAfterRefusal is called when the service refused used with 401. It
// returns the token to send the request again with, and false when there is
// none: without a token file, or when the file still holds used.
func (c *Client) tokenAfterRefusal(used string) (string, bool) {
	if c.tokenFile == "" {
		return "", false
	}
	c.reloadMu.Lock()
	defer c.reloadMu.Unlock()
	token := c.loadToken()
	if token == used { // nobody has reloaded since used was sent
		token = c.reloadToken(reloadRefused)
	}
	return token, token != used
}

func (c *Client) loadToken() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

func (c *Client) reloadDue() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now().Sub(c.tokenReadAt) >= c.reloadEvery
}

// reloadToken reads the token file (the caller holds reloadMu) and returns
// the token now in use: the file's, or the previous one when the file cannot
// be read or holds no valid token.
func (c *Client) reloadToken(reason string) string {
	token, err := readTokenFile(c.tokenFile)
	c.mu.Lock()
	c.tokenReadAt = c.now()
	changed := err == nil && token != c.token
	if changed {
		c.token = token
	}
	current := c.token
	c.mu.Unlock()
	switch {
	case err != nil:
		c.log.Warn("staking api token file could not be reloaded; keeping the current token",
			zap.String("path", c.tokenFile), zap.String("reason", reason), zap.Error(err))
	case changed:
		c.log.Info("staking api token reloaded from file", zap.String("path", c.tokenFile), zap.String("reason", reason))
	}
	return current
}

// noteAuth records whether the service refused the token in the final
// response to a request.
func (c *Client) noteAuth(status int, req request, requestID string) {
	refused := status == http.StatusUnauthorized
	c.mu.Lock()
	wasFailing := !c.failingSince.IsZero()
	switch {
	case refused && !wasFailing:
		c.failingSince = c.now()
	case !refused:
		c.failingSince = time.Time{}
	}
	c.mu.Unlock()
	switch {
	case refused && !wasFailing:
		c.log.Warn("staking api refuses the token",
			zap.String("method", req.method), zap.String("path", req.path), zap.String("requestId", requestID),
			zap.String("tokenFile", c.tokenFile))
	case !refused && wasFailing:
		c.log.Info("staking api accepts the token again",
			zap.String("method", req.method), zap.String("path", req.path), zap.Int("status", status))
	}
}

// AuthHealthy reports whether the service accepts the client's token, as far
// as the last response tells. It starts true and turns false when a request
// ends refused with HTTP 401 (NoTokenException, WrongTokenException or any
// other 401 body) after the client has done what it can: with
// WithTokenFile, read the file again and found the same token, or sent the
// request again with the new token and had that refused too; with a fixed
// token, at the first 401. It turns true again with the next response that
// is not a 401, whatever its status. A call that got no response (a
// transport error, or an argument or missing-token error refused before
// sending) leaves it as it is.
//
// While it is false every call is likely to fail the same way until the
// token is replaced: readiness checks report not ready, and
// AuthFailingSince says for how long. It is safe to call concurrently with
// requests.
func (c *Client) AuthHealthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failingSince.IsZero()
}

// AuthFailingSince returns when the current run of refusals began: the time
// (on the client's clock) of the first response of the run that ended a
// request with 401. It is the zero time while AuthHealthy is true.
func (c *Client) AuthFailingSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failingSince
}
