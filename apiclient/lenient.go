package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// dateTimeForm is the shape of a date-time ParseDateTime accepts: date, a
// 'T', 't' or space, hh:mm:ss, an optional fraction, and an optional zone
// ('Z', 'z', ±hh:mm or ±hhmm).
var dateTimeForm = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$`)

// maxQuoted bounds how much of a refused value an error quotes.
const maxQuoted = 64

// ParseDateTime reads an ISO 8601 date-time in the forms services emit:
// RFC 3339 with or without fractional seconds ("2026-11-22T00:11:12Z",
// "2026-11-22T00:11:12.123456+02:00"), an offset without a colon
// ("+0200"), a space instead of the 'T' ("2026-11-22 00:11:12Z"), and no
// zone at all, which is read as UTC ("2026-11-22T00:11:12"). Anything else (a
// date alone, no seconds, ISO 8601 basic format, out-of-range fields) is an
// error quoting the value.
func ParseDateTime(s string) (time.Time, error) {
	m := dateTimeForm.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("%.*q is not an ISO 8601 date-time (want e.g. 2006-01-02T15:04:05Z)", maxQuoted, s)
	}
	zone := strings.ToUpper(m[4])
	switch {
	case zone == "":
		zone = "Z"
	case len(zone) == 5: // ±hhmm
		zone = zone[:3] + ":" + zone[3:]
	}
	if zone != "Z" && (zone[1:3] > "23" || zone[4:] > "59") {
		return time.Time{}, fmt.Errorf("%.*q is not a valid date-time: zone offset out of range", maxQuoted, s)
	}
	t, err := time.Parse(time.RFC3339Nano, m[1]+"T"+m[2]+m[3]+zone)
	if err != nil {
		return time.Time{}, fmt.Errorf("%.*q is not a valid date-time: %w", maxQuoted, s, err)
	}
	return t, nil
}

// DateTime is the date-time of every result field: a time.Time that decodes
// from any form ParseDateTime accepts. It encodes as RFC 3339 with the
// fraction it has, like time.Time.
type DateTime struct {
	time.Time
}

// dateTimeType is reported in the *json.UnmarshalTypeError of a refused
// date-time, so that encoding/json names the field and decodeEnvelope can
// say which one it is.
var dateTimeType = reflect.TypeFor[DateTime]()

// UnmarshalJSON reads a JSON string with ParseDateTime; null leaves d as it
// is. Any other JSON value is an error. The error is a
// *json.UnmarshalTypeError whose Value says why the value was refused, so
// that encoding/json adds the field it was decoding.
func (d *DateTime) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: fmt.Sprintf("%.*s is not a date-time string", maxQuoted, bytes.TrimSpace(b)), Type: dateTimeType}
	}
	t, err := ParseDateTime(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: err.Error(), Type: dateTimeType}
	}
	d.Time = t
	return nil
}

// UnmarshalText reads text with ParseDateTime.
func (d *DateTime) UnmarshalText(text []byte) error {
	t, err := ParseDateTime(string(text))
	if err != nil {
		return err
	}
	d.Time = t
	return nil
}

// namedField turns the error of a refused date-time into "field: why"; other
// errors are returned as they are.
func namedField(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type == dateTimeType && te.Field != "" {
		return fmt.Errorf("apiclient: %s: %s", te.Field, te.Value)
	}
	return err
}

// intField decodes one integer field of a result, given as a JSON number or a
// string holding an integer, into dst, naming the field when the value is
// refused. null leaves dst nil.
type intField struct {
	name string
	dst  **int64
}

func (f *intField) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	n, err := parseFlexInt(b)
	if err != nil {
		return fmt.Errorf("apiclient: %s: %w", f.name, err)
	}
	*f.dst = &n
	return nil
}

// UnmarshalJSON decodes the result of endpoints 10, 11 and 12; amount may be
// a JSON number or a string holding an integer.
func (t *UnsignedTransaction) UnmarshalJSON(b []byte) error {
	type plain UnsignedTransaction
	w := struct {
		*plain
		Amount intField `json:"amount"`
	}{
		plain:  (*plain)(t),
		Amount: intField{"amount", &t.Amount},
	}
	return json.Unmarshal(b, &w)
}

// UnmarshalJSON decodes the extraData of endpoints 10, 11 and 12; the
// withdraw amount may be a JSON number or a string holding an integer.
func (x *UnsignedExtraData) UnmarshalJSON(b []byte) error {
	type plain UnsignedExtraData
	var amount *int64
	w := struct {
		*plain
		Amount intField `json:"amount"`
	}{plain: (*plain)(x), Amount: intField{"extraData.amount", &amount}}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if amount != nil {
		x.Amount = (*FlexInt)(amount)
	}
	return nil
}
