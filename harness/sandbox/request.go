package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxBodyBytes bounds request bodies.
const maxBodyBytes = 1 << 20

// jsonBody is a decoded JSON object whose fields are checked one by one so
// that every bad field is reported.
type jsonBody struct {
	prefix string
	fields map[string]json.RawMessage
}

// readBody decodes the JSON object body of r.
func readBody(r *http.Request) (jsonBody, *apiError) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return jsonBody{}, invalidField("body", "isReadable", "request body could not be read")
	}
	if len(b) > maxBodyBytes {
		return jsonBody{}, invalidField("body", "maxSize", "request body must not exceed %d bytes", maxBodyBytes)
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return jsonBody{}, invalidField("body", "isJson", "request body must be a JSON object")
	}
	return jsonBody{fields: fields}, nil
}

// name is the property name of field as reported in errors.
func (b jsonBody) name(field string) string {
	if b.prefix == "" {
		return field
	}
	return b.prefix + "." + field
}

// str reads a string field; a missing required field or a non-string value
// adds a field error.
func (b jsonBody) str(field string, required bool, errs *[]fieldError) (string, bool) {
	raw, ok := b.fields[field]
	if !ok || string(raw) == "null" {
		if required {
			*errs = append(*errs, fieldErr(b.name(field), "isNotEmpty", "%s should not be empty", b.name(field)))
		}
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		*errs = append(*errs, fieldErr(b.name(field), "isString", "%s must be a string", b.name(field)))
		return "", false
	}
	if required && strings.TrimSpace(s) == "" {
		*errs = append(*errs, fieldErr(b.name(field), "isNotEmpty", "%s should not be empty", b.name(field)))
		return "", false
	}
	return s, true
}

// number reads a JSON number field.
func (b jsonBody) number(field string, required bool, errs *[]fieldError) (json.Number, bool) {
	raw, ok := b.fields[field]
	if !ok || string(raw) == "null" {
		if required {
			*errs = append(*errs, fieldErr(b.name(field), "isNotEmpty", "%s should not be empty", b.name(field)))
		}
		return "", false
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil || raw[0] == '"' {
		*errs = append(*errs, fieldErr(b.name(field), "isNumber", "%s must be a number", b.name(field)))
		return "", false
	}
	return n, true
}

// object reads a nested object field.
func (b jsonBody) object(field string, required bool, errs *[]fieldError) (jsonBody, bool) {
	raw, ok := b.fields[field]
	if !ok || string(raw) == "null" {
		if required {
			*errs = append(*errs, fieldErr(b.name(field), "isNotEmpty", "%s should not be empty", b.name(field)))
		}
		return jsonBody{}, false
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		*errs = append(*errs, fieldErr(b.name(field), "isObject", "%s must be an object", b.name(field)))
		return jsonBody{}, false
	}
	return jsonBody{prefix: b.name(field), fields: fields}, true
}

// lamportsField parses an amount string holding a positive integer that
// fits in 64 bits.
func lamportsField(property, s string, errs *[]fieldError) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		if n, ok := new(big.Int).SetString(s, 10); ok && n.Sign() > 0 {
			*errs = append(*errs, fieldErr(property, "max", "%s must not exceed %d lamports", property, uint64(1<<64-1)))
			return 0, false
		}
		*errs = append(*errs, fieldErr(property, "isNumberString", "%s must be a string holding a positive integer number of lamports", property))
		return 0, false
	}
	if v == 0 {
		*errs = append(*errs, fieldErr(property, "isPositive", "%s must be a positive number of lamports", property))
		return 0, false
	}
	return v, true
}

// intQuery reads an optional integer query parameter bounded by [lo, hi].
func intQuery(q url.Values, name string, lo, hi, def int64, errs *[]fieldError) int64 {
	s := q.Get(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		*errs = append(*errs, fieldErr(name, "isInt", "%s must be an integer number", name))
		return def
	}
	if v < lo {
		*errs = append(*errs, fieldErr(name, "min", "%s must not be less than %d", name, lo))
		return def
	}
	if v > hi {
		*errs = append(*errs, fieldErr(name, "max", "%s must not be greater than %d", name, hi))
		return def
	}
	return v
}

// optInt reads an optional integer query parameter; nil when absent.
func optInt(q url.Values, name string, errs *[]fieldError) *int64 {
	s := q.Get(name)
	if s == "" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		*errs = append(*errs, fieldErr(name, "isInt", "%s must be a non-negative integer number", name))
		return nil
	}
	return &v
}

// timeQuery reads an optional ISO 8601 date-time (or date) parameter.
func timeQuery(q url.Values, name string, def time.Time, errs *[]fieldError) time.Time {
	s := q.Get(name)
	if s == "" {
		return def
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	*errs = append(*errs, fieldErr(name, "isDateString", "%s must be a valid ISO 8601 date string", name))
	return def
}

// errUnknownEncoding is returned when a transaction string is in no
// accepted encoding.
var errUnknownEncoding = errors.New("not base64, base58 or hex")

// describe names a value for messages without echoing long input.
func describe(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q... (%d characters)", s[:64], len(s))
	}
	return fmt.Sprintf("%q", s)
}
