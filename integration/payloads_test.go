//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mr-tron/base58"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/stakeflow/stakeflow/codec"
)

// The secrets scan: every history is walked message by message (protoreflect, so that event types
// and fields added to the API later are covered without a change here), every
// temporal.api.common.v1.Payload met on the way (inputs, results, memo, search attributes, headers,
// user metadata, marker and signal and update data, failure details at any depth of causes, a
// failure's encoded attributes, ...) is opened with the run's keyset when it is sealed
// (binary/encrypted; the histories are read as the server stores them) and decoded with the SDK's
// default data converter (a
// binary/protobuf payload of a type this binary does not know, as the server's schedule arguments,
// is read from the wire and the payloads inside it decoded in turn), and the decoded text, the strings inside it, the bytes that base64 or base58 strings inside it stand for,
// the payload's stored bytes, every other bytes field and the event's protojson are all searched
// for every form of every secret.

// Kinds of scanned bytes: what a scanPiece holds.
const (
	// kindProtoJSON is the event as `temporal workflow show --output json` writes it: what the scan
	// saw before payloads were decoded (each payload's data is base64 in it).
	kindProtoJSON = "protojson"
	// kindDecoded is a payload decoded by the data converter: the JSON text of json/plain, the bytes
	// of binary/plain, the protojson of a proto payload.
	kindDecoded = "decoded payload"
	// kindString is the strings inside a decoded JSON payload, unescaped.
	kindString = "decoded strings"
	// kindInner is what the base64 and base58 strings inside a decoded payload decode to.
	kindInner = "bytes inside decoded strings"
	// kindStored is a payload's data and metadata as stored.
	kindStored = "payload bytes"
	// kindBytes is a bytes field outside any payload.
	kindBytes = "bytes field"
	// kindLog is the log lines of the stack and the worker.
	kindLog = "log"
	// kindOpened is the data and metadata of a payload the keyset opened (binary/encrypted in the
	// history): what the stored bytes hold once decrypted.
	kindOpened = "decrypted payload bytes"
	// kindOutsideSearchAttributes is the event's protojson with its search attributes left out:
	// what the server stores that no codec touches, besides the search attributes (docs/encryption.md).
	kindOutsideSearchAttributes = "protojson outside search attributes"
)

// storedKinds are the kinds of pieces that hold the history as the server stores it, before any
// payload is decoded or decrypted.
var storedKinds = []string{kindProtoJSON, kindStored, kindBytes, kindOutsideSearchAttributes}

const (
	payloadName = protoreflect.FullName("temporal.api.common.v1.Payload")
	anyName     = protoreflect.FullName("google.protobuf.Any")
	failureName = protoreflect.FullName("temporal.api.failure.v1.Failure")
)

// schedulerPrefix starts the IDs of the workflows the server runs for schedules: their own
// payloads are the server's (it holds no key), the scheduled action's inside them the client's.
const schedulerPrefix = "temporal-sys-scheduler:"

// scanPiece is one stretch of bytes the scan searches and where it comes from.
type scanPiece struct {
	WorkflowID, RunID string
	EventID           int64
	EventType         enums.EventType
	// Path is the proto field path inside the event, e.g.
	// activity_task_failed_event_attributes.failure.cause.application_failure_info.details.payloads[0].
	Path     string
	Kind     string
	Encoding string // the payload's encoding, for payload pieces
	Data     []byte
}

func (p *scanPiece) where() string {
	if p.Kind == kindLog {
		return "the log lines"
	}
	w := fmt.Sprintf("workflow %s run %s event %d %s", p.WorkflowID, p.RunID, p.EventID, p.EventType)
	if p.Path != "" {
		w += " at " + p.Path
	}
	w += " (" + p.Kind
	if p.Encoding != "" {
		w += ", " + p.Encoding
	}
	return w + ")"
}

// historyScan collects the pieces of the histories and logs it is given.
type historyScan struct {
	dc     converter.DataConverter
	pieces []scanPiece
	// payloads counts the payloads decoded, by encoding; undecodable lists those the converter could
	// not read (a payload the scan cannot read is one it cannot vouch for).
	payloads    map[string]int
	undecodable []string
	events      int
	types       map[string]string // workflow ID -> workflow type
	// fromWire counts the binary/protobuf payloads of types this binary does not know, read from
	// the wire.
	fromWire int

	// codec, when set, is the keyset's strict codec: every binary/encrypted payload is opened with
	// it and scanned as what it holds, and a payload a client wrote in clear is listed in clear.
	codec *codec.Codec
	// keyIDs counts the encrypted payloads by the key that sealed them.
	keyIDs map[string]int
	// clear lists the payloads stored unencrypted that a client wrote (not a search attribute,
	// not the server's own).
	clear []string
	// failures counts the failures met; clearFailures lists those whose message is stored in
	// clear, or whose encoded attributes are not sealed. sealedMessage is the message the SDK
	// puts in place of an encoded one.
	failures      int
	serverFailure int
	clearFailures []string
	sealedMessage string
}

func newHistoryScan() *historyScan {
	return &historyScan{dc: converter.GetDefaultDataConverter(), payloads: map[string]int{}, types: map[string]string{}, keyIDs: map[string]int{}}
}

// newSealedHistoryScan is a scan of histories written through the payload codec of keys: every
// payload must open with it.
func newSealedHistoryScan(keys *codec.Keyset) *historyScan {
	s := newHistoryScan()
	s.codec = codec.New(keys)
	// The placeholder message, as the SDK writes it.
	f := &failurepb.Failure{Message: "a message"}
	if err := converter.EncodeCommonFailureAttributes(converter.GetDefaultDataConverter(), f); err == nil {
		s.sealedMessage = f.GetMessage()
	}
	return s
}

// fetchHistory reads the whole history of one run (the latest run when runID is empty).
func fetchHistory(ctx context.Context, id, runID string) (*historypb.History, error) {
	it := st.Client.GetWorkflowHistory(ctx, id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		h.Events = append(h.Events, ev)
	}
	return h, nil
}

// listExecutions lists every run the visibility API knows in the client's namespace that query
// selects, page by page.
func listExecutions(ctx context.Context, query string) ([]*commonpb.WorkflowExecution, error) {
	var out []*commonpb.WorkflowExecution
	var token []byte
	for {
		resp, err := st.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			PageSize: 500, NextPageToken: token, Query: query,
		})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			out = append(out, e.GetExecution())
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// addHistory adds every event of a history.
func (s *historyScan) addHistory(id, runID string, h *historypb.History) error {
	for _, ev := range h.GetEvents() {
		s.events++
		if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
			s.types[id] = a.GetWorkflowType().GetName()
		}
		base := scanPiece{WorkflowID: id, RunID: runID, EventID: ev.GetEventId(), EventType: ev.GetEventType()}
		raw, err := protojson.Marshal(ev)
		if err != nil {
			return err
		}
		s.add(base, "", kindProtoJSON, "", raw)
		outside := proto.Clone(ev)
		clearSearchAttributes(outside.ProtoReflect())
		if raw, err = protojson.Marshal(outside); err != nil {
			return err
		}
		s.add(base, "", kindOutsideSearchAttributes, "", raw)
		s.walk(base, ev.ProtoReflect(), "")
	}
	return nil
}

// clearSearchAttributes clears every search_attributes field in m, at any depth.
func clearSearchAttributes(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == "search_attributes" {
			m.Clear(fd)
			return true
		}
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		switch {
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				clearSearchAttributes(v.List().Get(i).Message())
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					clearSearchAttributes(mv.Message())
					return true
				})
			}
		default:
			clearSearchAttributes(v.Message())
		}
		return true
	})
}

// addLogs adds the log lines.
func (s *historyScan) addLogs(text string) {
	s.pieces = append(s.pieces, scanPiece{Kind: kindLog, Data: []byte(text)})
}

func (s *historyScan) add(base scanPiece, path, kind, enc string, data []byte) {
	if len(data) == 0 {
		return
	}
	p := base
	p.Path, p.Kind, p.Encoding, p.Data = path, kind, enc, data
	s.pieces = append(s.pieces, p)
}

// walk visits every set field of m: payloads are decoded, Any messages opened, other messages
// walked into, bytes fields kept; strings are in the event's protojson already.
func (s *historyScan) walk(base scanPiece, m protoreflect.Message, path string) {
	switch m.Descriptor().FullName() {
	case payloadName:
		p, ok := m.Interface().(*commonpb.Payload)
		if !ok {
			p = &commonpb.Payload{}
			raw, err := proto.Marshal(m.Interface())
			if err == nil {
				err = proto.Unmarshal(raw, p)
			}
			if err != nil {
				s.undecodable = append(s.undecodable, fmt.Sprintf("%s at %s: %v", base.where(), path, err))
				return
			}
		}
		s.payload(base, path, p, false)
		return
	case failureName:
		if f, ok := m.Interface().(*failurepb.Failure); ok {
			s.failure(base, path, f)
		}
	case anyName:
		a, ok := m.Interface().(*anypb.Any)
		if ok {
			s.add(base, path+".value", kindBytes, "", a.GetValue())
			if inner, err := a.UnmarshalNew(); err == nil {
				s.walk(base, inner.ProtoReflect(), path+"<"+a.GetTypeUrl()+">")
			}
			return
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := string(fd.Name())
		if path != "" {
			p = path + "." + p
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				s.value(base, fd, l.Get(i), fmt.Sprintf("%s[%d]", p, i))
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				s.value(base, fd.MapValue(), mv, fmt.Sprintf("%s[%s]", p, k.String()))
				return true
			})
		default:
			s.value(base, fd, v, p)
		}
		return true
	})
}

func (s *historyScan) value(base scanPiece, fd protoreflect.FieldDescriptor, v protoreflect.Value, path string) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		s.walk(base, v.Message(), path)
	case protoreflect.BytesKind:
		s.add(base, path, kindBytes, "", v.Bytes())
	}
}

// failure checks, when the histories are sealed, that a failure's message and stack trace are
// not stored in clear: they are in its encoded attributes, sealed, and the message is the SDK's
// placeholder. The failures the server makes itself (a timeout, a termination, its own error)
// carry its own words and no encoded attributes.
func (s *historyScan) failure(base scanPiece, path string, f *failurepb.Failure) {
	s.failures++
	if s.codec == nil {
		return
	}
	where := base.where() + " at " + path
	if ea := f.GetEncodedAttributes(); ea != nil {
		if enc := string(ea.GetMetadata()[converter.MetadataEncoding]); enc != codec.Encoding {
			s.clearFailures = append(s.clearFailures, fmt.Sprintf("%s: encoded attributes stored as %s, not sealed", where, enc))
		}
		if f.GetMessage() != s.sealedMessage || f.GetStackTrace() != "" {
			s.clearFailures = append(s.clearFailures, fmt.Sprintf("%s: message %q and a stack trace of %d bytes beside the encoded attributes", where, f.GetMessage(), len(f.GetStackTrace())))
		}
		return
	}
	if f.GetTimeoutFailureInfo() != nil || f.GetTerminatedFailureInfo() != nil || f.GetServerFailureInfo() != nil {
		s.serverFailure++
		return
	}
	s.clearFailures = append(s.clearFailures, fmt.Sprintf("%s: message stored in clear (%d bytes), no encoded attributes", where, len(f.GetMessage())))
}

// searchAttribute reports whether payload p at path is a search attribute's value: one in a
// search_attributes field, or, inside a message of the server's read from the wire, one with the
// value type the SDK writes beside every search attribute.
func searchAttribute(path string, p *commonpb.Payload) bool {
	if strings.Contains(path, "search_attributes.") {
		return true
	}
	if !strings.Contains(path, "<") {
		return false
	}
	_, ok := p.GetMetadata()["type"]
	return ok
}

// serverWritten reports whether the payload at path of workflow id is one the server wrote: in
// the workflows that run schedules, every payload but those of the scheduled action, which the
// client wrote and which sit inside the server's own messages (read from the wire).
func serverWritten(id, path string) bool {
	return strings.HasPrefix(id, schedulerPrefix) && !strings.Contains(path, "<temporal.server.")
}

// payload decodes one payload with the data converter and keeps what it holds in every form;
// opened is set for a payload the codec opened, whose bytes were never stored as they are.
func (s *historyScan) payload(base scanPiece, path string, p *commonpb.Payload, opened bool) {
	enc := string(p.GetMetadata()[converter.MetadataEncoding])
	s.payloads[enc]++
	stored := kindStored
	if opened {
		stored = kindOpened
	}
	s.add(base, path+".data", stored, enc, p.GetData())
	for k, v := range p.GetMetadata() {
		s.add(base, path+".metadata["+k+"]", stored, enc, v)
	}
	if s.codec != nil && !opened && enc != codec.Encoding && !searchAttribute(path, p) && !serverWritten(base.WorkflowID, path) {
		s.clear = append(s.clear, fmt.Sprintf("%s at %s (%s)", base.where(), path, enc))
	}
	fail := func(err error) {
		s.undecodable = append(s.undecodable, fmt.Sprintf("%s at %s (%s): %v", base.where(), path, enc, err))
	}
	switch enc {
	case codec.Encoding:
		if s.codec == nil {
			fail(errors.New("encrypted, and the scan has no keyset"))
			return
		}
		s.keyIDs[string(p.GetMetadata()[codec.MetadataKeyID])]++
		out, err := s.codec.Decode([]*commonpb.Payload{p})
		if err != nil {
			fail(err)
			return
		}
		s.payload(base, path, out[0], true)
	case converter.MetadataEncodingNil:
		var v any
		if err := s.dc.FromPayload(p, &v); err != nil {
			fail(err)
		}
	case converter.MetadataEncodingBinary:
		var b []byte
		if err := s.dc.FromPayload(p, &b); err != nil {
			fail(err)
			return
		}
		s.add(base, path, kindDecoded, enc, b)
		s.add(base, path, kindDecoded, enc, []byte(s.dc.ToString(p)))
	case converter.MetadataEncodingJSON:
		var v any
		if err := s.dc.FromPayload(p, &v); err != nil {
			fail(err)
			return
		}
		s.add(base, path, kindDecoded, enc, []byte(s.dc.ToString(p)))
		s.strings(base, path, enc, v)
	case converter.MetadataEncodingProtoJSON, converter.MetadataEncodingProto:
		name := string(p.GetMetadata()[converter.MetadataMessageType])
		typ, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
		if err != nil {
			if enc == converter.MetadataEncodingProto {
				// A type this binary does not know (the server's own, in the histories of the
				// workflows that run schedules): read it from the wire, where the payloads it
				// carries (the scheduled action's input, memo, ...) are found and decoded.
				if !s.wire(base, path+"<"+name+">", p.GetData(), 0) {
					fail(fmt.Errorf("message type %q: %w, and not a protobuf message on the wire", name, err))
					return
				}
				s.fromWire++
				return
			}
			// JSON of an unknown message type: still JSON.
			var v any
			if err := json.Unmarshal(p.GetData(), &v); err != nil {
				fail(err)
				return
			}
			s.add(base, path, kindDecoded, enc, p.GetData())
			s.strings(base, path, enc, v)
			return
		}
		msg := typ.New().Interface()
		// The converters want a pointer to a concrete message pointer.
		ptr := reflect.New(reflect.TypeOf(msg))
		ptr.Elem().Set(reflect.ValueOf(msg))
		if err := s.dc.FromPayload(p, ptr.Interface()); err != nil {
			fail(err)
			return
		}
		if text, err := protojson.Marshal(msg); err == nil {
			s.add(base, path, kindDecoded, enc, text)
		}
		// The message may hold payloads or bytes of its own.
		s.walk(base, msg.ProtoReflect(), path+"<"+name+">")
	default:
		fail(fmt.Errorf("encoding %q unknown to the default data converter", enc))
	}
}

// wireField is a length-delimited field of a message read from the wire.
type wireField struct {
	num protowire.Number
	b   []byte
}

// parseWire reads b as a protobuf message of unknown type and returns its length-delimited fields;
// ok is false when b is not a well-formed message.
func parseWire(b []byte) (fields []wireField, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num < 1 {
			return nil, false
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false
			}
			fields = append(fields, wireField{num, v})
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, false
		}
		b = b[m:]
	}
	return fields, true
}

// asPayload returns b as a Payload if it is one: well-formed, with nothing a Payload does not
// have, and an encoding the data converter knows.
func asPayload(b []byte) *commonpb.Payload {
	p := &commonpb.Payload{}
	if proto.Unmarshal(b, p) != nil || len(p.ProtoReflect().GetUnknown()) > 0 {
		return nil
	}
	switch string(p.GetMetadata()[converter.MetadataEncoding]) {
	case converter.MetadataEncodingNil, converter.MetadataEncodingBinary, converter.MetadataEncodingJSON,
		converter.MetadataEncodingProtoJSON, converter.MetadataEncodingProto, codec.Encoding:
		return p
	}
	return nil
}

// wire walks a message of unknown type read from the wire: every length-delimited field that is a
// Payload is decoded, every one that reads as a message is walked into (a string that happens to
// read as one is harmless); its bytes are in the payload's stored bytes already. It reports whether
// b is a message.
func (s *historyScan) wire(base scanPiece, path string, b []byte, depth int) bool {
	fields, ok := parseWire(b)
	if !ok {
		return false
	}
	for _, f := range fields {
		p := fmt.Sprintf("%s.%d", path, f.num)
		if pl := asPayload(f.b); pl != nil {
			s.payload(base, p, pl, false)
			continue
		}
		if depth < 32 {
			s.wire(base, p, f.b, depth+1)
		}
	}
	return true
}

// strings keeps the strings (keys and values) inside a decoded JSON value unescaped, and the bytes
// that those of them written in base64 or base58 stand for: a []byte field of a JSON payload is
// base64 in it, and a key inside a longer blob would not show as a whole in any encoding of the blob.
func (s *historyScan) strings(base scanPiece, path, enc string, v any) {
	var text, inner bytes.Buffer
	var visit func(any)
	keep := func(str string) {
		text.WriteString(str)
		text.WriteByte('\n')
		for _, b := range decodings(str) {
			inner.Write(b)
			inner.WriteByte(0)
		}
	}
	visit = func(v any) {
		switch v := v.(type) {
		case string:
			keep(v)
		case []any:
			for _, e := range v {
				visit(e)
			}
		case map[string]any:
			for k, e := range v {
				keep(k)
				visit(e)
			}
		}
	}
	visit(v)
	s.add(base, path, kindString, enc, text.Bytes())
	s.add(base, path, kindInner, enc, inner.Bytes())
}

// decodings returns what str stands for if it is base64 (either alphabet, padded or not) or base58.
func decodings(str string) [][]byte {
	if len(str) < 16 {
		return nil
	}
	var out [][]byte
	for _, e := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := e.DecodeString(str); err == nil {
			out = append(out, b)
			break
		}
	}
	if b, err := base58.Decode(str); err == nil {
		out = append(out, b)
	}
	return out
}

// secretForm is one way a secret can be written.
type secretForm struct {
	Secret string // whose, e.g. "staker <pubkey> key", "service token"
	Form   string // e.g. "base58", "hex", "base64", "raw bytes"
	Needle []byte
}

func (f secretForm) String() string { return f.Secret + " (" + f.Form + ")" }

// aligned64 writes the longest prefix of b made of whole 3-byte groups in enc: the part of its
// encoding that is the same wherever b starts at a group boundary inside longer bytes.
func aligned64(enc *base64.Encoding, b []byte) []byte {
	return []byte(enc.EncodeToString(b[:len(b)/3*3]))
}

// keyForms returns the forms of a Solana keypair (64 bytes: seed then public key) the scan
// searches for: base58, hex, base64 and JSON arrays of the key and of its seed, and the seed's raw
// bytes. file is the keypair file's text. Prefixes of 40 characters are enough to be unique and
// match where the encoding of a longer value starts with them.
func keyForms(owner string, key []byte, file string) []secretForm {
	seed := key[:32]
	ints := make([]string, len(key))
	for i, b := range key {
		ints[i] = fmt.Sprint(b)
	}
	forms := []secretForm{
		{Form: "key base58", Needle: []byte(base58.Encode(key))},
		{Form: "seed base58", Needle: []byte(base58.Encode(seed)[:40])},
		{Form: "key hex", Needle: []byte(hex.EncodeToString(key))},
		{Form: "seed hex", Needle: []byte(hex.EncodeToString(seed))},
		{Form: "seed HEX", Needle: []byte(strings.ToUpper(hex.EncodeToString(seed)))},
		{Form: "key base64", Needle: aligned64(base64.StdEncoding, key)},
		{Form: "seed base64", Needle: aligned64(base64.StdEncoding, seed)},
		{Form: "key base64url", Needle: aligned64(base64.URLEncoding, key)},
		{Form: "seed base64url", Needle: aligned64(base64.URLEncoding, seed)},
		{Form: "json array compact", Needle: []byte(("[" + strings.Join(ints, ","))[:40])},
		{Form: "json array spaced", Needle: []byte(("[" + strings.Join(ints, ", "))[:40])},
		{Form: "seed raw bytes", Needle: append([]byte(nil), seed...)},
	}
	if file = strings.TrimSpace(file); len(file) >= 40 {
		forms = append(forms, secretForm{Form: "json array as in its file", Needle: []byte(file[:40])})
	}
	return ownedBy(owner, forms)
}

// tokenForms returns the forms of the service's bearer token: as it is, in base64, and the header
// every token the service signs the same way starts with (so that tokens rotated away during the
// run, which no file holds any more, are caught as well).
func tokenForms(token string) []secretForm {
	forms := []secretForm{
		{Form: "as is", Needle: []byte(token)},
		{Form: "base64", Needle: aligned64(base64.StdEncoding, []byte(token))},
	}
	if header, _, ok := strings.Cut(token, "."); ok && len(header) >= 16 {
		forms = append(forms, secretForm{Form: "JWT header of any token", Needle: []byte(header)})
	}
	return ownedBy("service token", forms)
}

// ownedBy sets the owner of forms (forms that come out the same, such as base64 and base64url
// without a + or /, stay apart: each is reported by its own name).
func ownedBy(owner string, forms []secretForm) []secretForm {
	for i := range forms {
		forms[i].Secret = owner
	}
	return forms
}

// leak is a form of a secret found in a piece.
type leak struct {
	Form  secretForm
	Piece *scanPiece
	Line  int // for log pieces, the line it is on (1-based)
}

// String says where, never the secret.
func (l leak) String() string {
	if l.Line > 0 {
		return fmt.Sprintf("%s in %s, line %d", l.Form, l.Piece.where(), l.Line)
	}
	return fmt.Sprintf("%s in %s", l.Form, l.Piece.where())
}

// report lists leaks one place a line, with the forms and kinds found there, and never the secret.
func report(leaks []leak) string {
	type place struct{ secret, where string }
	var order []place
	forms, kinds := map[place][]string{}, map[place][]string{}
	for _, l := range leaks {
		p := l.Piece
		where := "the log lines"
		if p.Kind != kindLog {
			path := strings.TrimSuffix(p.Path, ".data")
			if i := strings.Index(path, ".metadata["); i >= 0 {
				path = path[:i]
			}
			where = fmt.Sprintf("workflow %s run %s event %d %s", p.WorkflowID, p.RunID, p.EventID, p.EventType)
			if path != "" {
				where += " at " + path
			}
			if p.Encoding != "" {
				where += " (" + p.Encoding + ")"
			}
		}
		k := place{l.Form.Secret, where}
		if _, ok := forms[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(forms[k], l.Form.Form) {
			forms[k] = append(forms[k], l.Form.Form)
		}
		kind := p.Kind
		if l.Line > 0 {
			kind = fmt.Sprintf("line %d", l.Line)
		}
		if !slices.Contains(kinds[k], kind) {
			kinds[k] = append(kinds[k], kind)
		}
	}
	var b strings.Builder
	for _, k := range order {
		fmt.Fprintf(&b, "\n%s as %s in %s, found in: %s", k.secret, strings.Join(forms[k], ", "), k.where, strings.Join(kinds[k], ", "))
	}
	return b.String()
}

// find returns every form found in every piece, at most once per piece and form.
func (s *historyScan) find(forms []secretForm) []leak {
	var out []leak
	for i := range s.pieces {
		p := &s.pieces[i]
		for _, f := range forms {
			at := bytes.Index(p.Data, f.Needle)
			if at < 0 {
				continue
			}
			l := leak{Form: f, Piece: p}
			if p.Kind == kindLog {
				l.Line = bytes.Count(p.Data[:at], []byte("\n")) + 1
			}
			out = append(out, l)
		}
	}
	return out
}

// contains reports whether needle is in a piece of one of kinds of one of the workflows ids.
func (s *historyScan) contains(needle []byte, ids map[string]bool, kinds ...string) bool {
	for i := range s.pieces {
		p := &s.pieces[i]
		if ids[p.WorkflowID] && slices.Contains(kinds, p.Kind) && bytes.Contains(p.Data, needle) {
			return true
		}
	}
	return false
}

// ofTypes returns the IDs of the workflows scanned whose type is one of types.
func (s *historyScan) ofTypes(types ...string) map[string]bool {
	out := map[string]bool{}
	for id, typ := range s.types {
		if slices.Contains(types, typ) {
			out[id] = true
		}
	}
	return out
}

// summary says what was scanned, for the test log.
func (s *historyScan) summary() string {
	var encs []string
	for e, n := range s.payloads {
		encs = append(encs, fmt.Sprintf("%s %d", e, n))
	}
	sort.Strings(encs)
	var size int
	for i := range s.pieces {
		size += len(s.pieces[i].Data)
	}
	var keys []string
	for id, n := range s.keyIDs {
		keys = append(keys, fmt.Sprintf("%s %d", id, n))
	}
	sort.Strings(keys)
	return fmt.Sprintf("%d events, payloads decoded: %s (%d of unknown proto types read from the wire; sealed under keys: %s); %d failures (%d the server's own); %d pieces, %d bytes",
		s.events, strings.Join(encs, ", "), s.fromWire, strings.Join(keys, ", "), s.failures, s.serverFailure, len(s.pieces), size)
}
