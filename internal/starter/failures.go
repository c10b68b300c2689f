package starter

import (
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/converter"
)

// openFailure puts back into f the message and stack trace that the failure converter sealed
// (with --payload-keyset the worker writes every failure's message as "Encoded failure", its text
// in an encrypted payload), so the starter shows failures as they were raised. A failure it cannot
// open keeps the placeholder.
func (r *Session) openFailure(f *failurepb.Failure) {
	if f.GetEncodedAttributes() == nil {
		return
	}
	dc, err := r.dataConverter()
	if err != nil {
		return
	}
	for ; f != nil; f = f.GetCause() {
		converter.DecodeCommonFailureAttributes(dc, f)
	}
}
