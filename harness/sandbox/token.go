package sandbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"
)

// rotatedSecretBytes is the length of a secret made by a token rotation.
const rotatedSecretBytes = 32

// tokenSecret is the HS256 secret the service checks tokens with; a
// rotation replaces it.
type tokenSecret struct {
	mu sync.RWMutex
	b  []byte
}

func newTokenSecret(b []byte) *tokenSecret {
	return &tokenSecret{b: append([]byte(nil), b...)}
}

func (t *tokenSecret) get() []byte {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.b
}

func (t *tokenSecret) set(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = b
}

// rotateToken makes a fresh secret, mints a token for subject with it, and
// only then makes it the accepted one.
func (s *server) rotateToken(subject string, ttl time.Duration) (string, error) {
	secret := make([]byte, rotatedSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("sandbox: new token secret: %w", err)
	}
	tok, err := MintToken(secret, subject, ttl)
	if err != nil {
		return "", err
	}
	s.secret.set(secret)
	s.log.Info("token secret rotated", zap.String("subject", subject))
	return tok, nil
}

// ErrEmptySecret is returned when a token secret is empty.
var ErrEmptySecret = errors.New("sandbox: token secret is empty")

// ErrEmptySubject is returned when a token subject is empty.
var ErrEmptySubject = errors.New("sandbox: token subject is empty")

// MintToken returns an HS256 JWT for subject signed with secret. The token
// expires after ttl; a ttl of zero or less mints a token without expiry.
func MintToken(secret []byte, subject string, ttl time.Duration) (string, error) {
	if len(secret) == 0 {
		return "", ErrEmptySecret
	}
	if subject == "" {
		return "", ErrEmptySubject
	}
	now := time.Now()
	claims := jwt.RegisteredClaims{Subject: subject, IssuedAt: jwt.NewNumericDate(now)}
	if ttl > 0 {
		claims.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
	if err != nil {
		return "", fmt.Errorf("sandbox: sign token: %w", err)
	}
	return tok, nil
}

// authenticate checks the bearer token of r and returns its subject. The
// token itself never appears in the returned error.
func authenticate(r *http.Request, secret []byte) (string, *apiError) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", noToken()
	}
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}))
	if err != nil {
		switch {
		case errors.Is(err, jwt.ErrTokenExpired):
			return "", wrongToken("token has expired")
		case errors.Is(err, jwt.ErrTokenSignatureInvalid):
			return "", wrongToken("token signature is invalid")
		default:
			return "", wrongToken("token is malformed or not valid")
		}
	}
	if claims.Subject == "" {
		return "", wrongToken("token has no subject")
	}
	return claims.Subject, nil
}

func noToken() *apiError {
	return &apiError{Status: http.StatusUnauthorized, Name: nameNoToken, Code: codeNoToken, Type: typeAuthentication,
		Message: "No bearer token in the Authorization header"}
}

func wrongToken(why string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Name: nameWrongToken, Code: codeWrongToken, Type: typeAuthentication,
		Message: "Wrong token: " + why}
}
