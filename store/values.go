package store

import (
	"fmt"
	"regexp"
	"time"
)

// sqliteTime is the text form of a time in SQLite: UTC, one fixed width, so that text order
// is time order.
const sqliteTime = "2006-01-02T15:04:05.000000Z"

var decimalText = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// timeArg is t as a statement argument: NULL when zero; UTC at microsecond precision.
func (db *DB) timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	t = t.UTC().Truncate(time.Microsecond)
	if db.dialect == DialectSQLite {
		return t.Format(sqliteTime)
	}
	return t
}

// decimalArg is s as a statement argument: NULL when empty, else s, which must be decimal text.
func decimalArg(field, s string) (any, error) {
	if s == "" {
		return nil, nil
	}
	if !decimalText.MatchString(s) {
		return nil, fmt.Errorf("store: %s %q is not decimal text", field, s)
	}
	return s, nil
}

// textArg is s as a statement argument of a nullable text column: NULL when empty.
func textArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullTime scans a time column of either dialect: a time from PostgreSQL, text from SQLite,
// NULL as the zero time.
type nullTime struct{ t *time.Time }

func (n nullTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.t = time.Time{}
	case time.Time:
		*n.t = x.UTC()
	case string:
		return n.parse(x)
	case []byte:
		return n.parse(string(x))
	default:
		return fmt.Errorf("store: cannot scan %T as a time", v)
	}
	return nil
}

func (n nullTime) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("store: stored time %q: %w", s, err)
	}
	*n.t = t.UTC()
	return nil
}

// nullText scans a nullable text or NUMERIC column; NULL is "".
type nullText struct{ s *string }

func (n nullText) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.s = ""
	case string:
		*n.s = x
	case []byte:
		*n.s = string(x)
	default:
		return fmt.Errorf("store: cannot scan %T as text", v)
	}
	return nil
}
