// Package notifytest is a webhook receiver's side of stakeflow's event signatures, written from
// the documented scheme alone (it does not call the notify package), for the tests that receive
// events.
package notifytest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// Signed reports whether a post with header h and raw body carries the signature the documented scheme
// gives under secret: X-Stakeflow-Signature = "v1=" + hex(HMAC-SHA256(secret, X-Stakeflow-Timestamp
// + "." + body)), compared in constant time.
func Signed(secret string, h http.Header, body []byte) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(h.Get("X-Stakeflow-Timestamp") + "." + string(body)))
	want := "v1=" + hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(want), []byte(h.Get("X-Stakeflow-Signature")))
}
