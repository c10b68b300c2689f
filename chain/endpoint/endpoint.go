// Package endpoint keeps RPC endpoint URLs, which may carry credentials (a user and password, an
// access token in the path or the query), out of error messages: every chain's read-only client
// reduces them to scheme and host.
package endpoint

import (
	"net/url"
	"strings"
)

// Short is endpoint reduced to its scheme and host ("[endpoint]" when it does not parse as a URL
// with a host).
func Short(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "[endpoint]"
	}
	return u.Scheme + "://" + u.Host
}

// Redact returns msg with every form of endpoint it may hold reduced to Short(endpoint), and any
// credential of the endpoint left elsewhere in it (its password, user, path and query, in the
// forms Go's errors print them) removed.
func Redact(msg, endpoint string) string {
	if endpoint == "" {
		return msg
	}
	short := Short(endpoint)
	msg = strings.ReplaceAll(msg, endpoint, short)
	u, err := url.Parse(endpoint)
	if err != nil {
		return msg
	}
	for _, form := range []string{u.String(), u.Redacted(), strings.Replace(u.Redacted(), ":xxxxx@", ":***@", 1)} {
		msg = strings.ReplaceAll(msg, form, short)
	}
	var secrets []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
		}
		secrets = append(secrets, u.User.Username()+":", u.User.Username()+"@")
	}
	if u.Path != "" && u.Path != "/" {
		secrets = append(secrets, u.EscapedPath(), u.Path)
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
	}
	for _, s := range secrets {
		if len(s) > 1 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return msg
}
