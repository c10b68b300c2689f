package starter

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/workflows"
)

// Search tags: with --payload-keyset the confidential search attributes (staker, account,
// transaction IDs) hold keyed tags of their values, written by the workflows and by the starter at
// start alike (workflows.Conceal); the starter tags what it searches for the same way, and
// `starter tag` prints a value's tag for the Web UI's search.

// searchTagger is the tagger of --payload-keyset, loaded once per command; nil without a keyset.
func (r *Session) searchTagger() (*codec.Tagger, error) {
	if !r.taggerLoaded {
		t, err := r.temporal.Tagger()
		if err != nil {
			return nil, err
		}
		r.tagger, r.taggerLoaded = t, true
	}
	return r.tagger, nil
}

// Conceal is attrs as an operation is started with: with --payload-keyset the confidential ones
// tagged or left out (workflows.Conceal), as the worker's workflows write them; unchanged without.
func (r *Session) Conceal(attrs []temporal.SearchAttributeUpdate) ([]temporal.SearchAttributeUpdate, error) {
	t, err := r.searchTagger()
	if err != nil || t == nil {
		return attrs, err
	}
	return workflows.Conceal(t, attrs...), nil
}

// Searchable is v as it stands where the server can read it (a confidential search attribute, an
// operation ID): v itself without --payload-keyset, its tag with one. what names v in the error
// of a keyset without a searchKey, whose operations hold no tags to find.
func (r *Session) Searchable(what, v string) (string, error) {
	t, err := r.searchTagger()
	if err != nil || t == nil {
		return v, err
	}
	tag, ok := t.Tag(v)
	if !ok {
		return "", &UsageError{Msg: fmt.Sprintf("%s: the keyset %s has no searchKey, so operations hold no tag of it (add a searchKey: docs/encryption.md)",
			what, r.temporal.PayloadKeyset)}
	}
	return tag, nil
}

type tagged struct {
	Value string `json:"value"`
	Tag   string `json:"tag"`
}

// tagCmd prints the search tag of each value given after the flags: what to paste in the Web UI's
// search (StakeflowStaker = "h:...") when payloads are encrypted.
func (r *Session) tagCmd(fs *flag.FlagSet) func(context.Context) error {
	return func(context.Context) error {
		values := fs.Args()
		if len(values) == 0 {
			return &UsageError{Msg: "tag: give the values to tag (addresses, transaction IDs) after the flags"}
		}
		if r.temporal.PayloadKeyset == "" {
			return &UsageError{Msg: "tag: give --payload-keyset (without a keyset, search attributes hold the values themselves)"}
		}
		out := make([]tagged, 0, len(values))
		lines := make([]string, 0, len(values))
		for _, v := range values {
			if strings.HasPrefix(v, "-") {
				return &UsageError{Msg: fmt.Sprintf("tag: %q: flags go before the values", v)}
			}
			tag, err := r.Searchable("tag", v)
			if err != nil {
				return err
			}
			out = append(out, tagged{Value: v, Tag: tag})
			lines = append(lines, tag+"  "+v)
		}
		return r.print(strings.Join(lines, "\n"), out)
	}
}
