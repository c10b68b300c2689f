// Package codec encrypts Temporal payloads: every input, result, signal, query answer, memo and
// encoded failure the worker and its clients write is sealed with AES-256-GCM under a key of the
// operator's keyset before it leaves the process, so the Temporal server, its database and its
// backups hold ciphertext only.
//
// Each encrypted payload names its key in its metadata (MetadataKeyID), and the key ID and the
// compression flag are bound to the ciphertext as additional data: a payload cannot be moved to
// another key or have its flag flipped without failing authentication. Encode uses the keyset's
// current key; Decode uses whichever key the payload names, so a keyset that gains a new current
// key keeps reading everything written under the old one (rotation without a stop). A payload
// naming a key the keyset lacks fails with an error naming that ID.
//
// Payloads of 1 KiB and more are compressed (zlib) before encryption when that makes them
// smaller. A Decode in strict mode (the worker and its clients) refuses payloads that are not
// encrypted: a process without the keyset cannot feed the worker clear input. The codec server
// decodes leniently, returning clear payloads as they are, so the Web UI shows both.
package codec

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/stakeflow/stakeflow/secretfile"
)

// Metadata of an encrypted payload. Its data is the 12-byte GCM nonce followed by the sealed
// protobuf encoding of the original payload (compressed first when MetadataCompression is "zlib").
const (
	// Encoding is the payload's "encoding" metadata.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the keyset key that sealed the payload.
	MetadataKeyID = "encryption-key-id"
	// MetadataCompression is "zlib" when the payload was compressed before sealing.
	MetadataCompression = "stakeflow-compression"
	// CompressionZlib is the value of MetadataCompression for a compressed payload.
	CompressionZlib = "zlib"
)

// CompressAbove is the size from which a payload is compressed before sealing (when that makes it
// smaller): below it the saving is a few bytes and the cost a zlib stream.
const CompressAbove = 1024

// KeySize is the size of an AES-256 key.
const KeySize = 32

// ErrUnknownKey is wrapped by the error of a payload sealed under a key the keyset lacks.
var ErrUnknownKey = errors.New("payload encrypted under a key this keyset does not hold")

// ErrClearPayload is wrapped by the strict decode of a payload that is not encrypted.
var ErrClearPayload = errors.New("payload is not encrypted")

// Key is one key of a keyset file: its ID (written in every payload it seals) and its 32 bytes,
// base64 (standard encoding).
type Key struct {
	ID  string `json:"id"`
	Key string `json:"key"`
}

// KeysetFile is the JSON form of a keyset: {"current": "<id>", "keys": [{"id": ..., "key": ...}],
// "searchKey": ...}.
type KeysetFile struct {
	Current string `json:"current"`
	Keys    []Key  `json:"keys"`
	// SearchKey is the key of the search tags (Tagger): 32 bytes, base64 (standard encoding). It
	// does not rotate with the payload keys: every tag ever written is under it. Optional: without
	// it the confidential search attributes are not written at all.
	SearchKey string `json:"searchKey,omitempty"`
}

// Keyset is a parsed keyset: the AEADs by key ID, the current key's ID and the search key.
type Keyset struct {
	current string
	aeads   map[string]cipher.AEAD
	search  []byte
}

// Current is the ID of the key new payloads are sealed with.
func (k *Keyset) Current() string { return k.current }

// IDs are the IDs of every key, current first.
func (k *Keyset) IDs() []string {
	ids := []string{k.current}
	for id := range k.aeads {
		if id != k.current {
			ids = append(ids, id)
		}
	}
	return ids
}

// LoadKeyset reads a keyset file, which must be 0600 or stricter. Errors name the file and what
// is wrong, never a key.
func LoadKeyset(path string) (*Keyset, error) {
	b, err := secretfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("payload keyset: %w", err)
	}
	ks, err := ParseKeyset(b)
	if err != nil {
		return nil, fmt.Errorf("payload keyset %s: %w", path, err)
	}
	return ks, nil
}

// ParseKeyset parses a keyset's JSON. Errors name the key by ID or position, never its bytes.
func ParseKeyset(data []byte) (*Keyset, error) {
	var f KeysetFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		// The JSON decoder's messages quote offsets and types, not the input.
		return nil, fmt.Errorf("not a keyset (want {\"current\": ID, \"keys\": [{\"id\": ID, \"key\": BASE64}]}): %w", err)
	}
	if len(f.Keys) == 0 {
		return nil, errors.New("no keys")
	}
	ks := &Keyset{current: f.Current, aeads: make(map[string]cipher.AEAD, len(f.Keys))}
	for i, k := range f.Keys {
		if err := checkID(k.ID); err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		if _, dup := ks.aeads[k.ID]; dup {
			return nil, fmt.Errorf("key ID %q appears twice", k.ID)
		}
		raw, err := base64.StdEncoding.DecodeString(k.Key)
		if err != nil {
			return nil, fmt.Errorf("key %q is not base64", k.ID)
		}
		if len(raw) != KeySize {
			return nil, fmt.Errorf("key %q has %d bytes; AES-256 wants %d", k.ID, len(raw), KeySize)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.ID, err)
		}
		ks.aeads[k.ID] = aead
	}
	search, err := f.searchKey()
	if err != nil {
		return nil, err
	}
	ks.search = search
	if f.Current == "" {
		return nil, errors.New(`no "current" key named`)
	}
	if _, ok := ks.aeads[f.Current]; !ok {
		return nil, fmt.Errorf("the current key %q is not among the keys", f.Current)
	}
	return ks, nil
}

// checkID refuses an empty ID or one that could not be told apart in an error or a log line.
func checkID(id string) error {
	if id == "" {
		return errors.New("empty key ID")
	}
	if len(id) > 64 {
		return fmt.Errorf("key ID of %d characters; at most 64", len(id))
	}
	if strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return fmt.Errorf("key ID %q: use letters, digits, '-', '_' and '.'", id)
	}
	return nil
}

// NewKeyFile makes a keyset file holding one fresh random key, current, under id, and a fresh
// search key.
func NewKeyFile(id string) (KeysetFile, error) {
	if err := checkID(id); err != nil {
		return KeysetFile{}, err
	}
	k, err := NewKey(id)
	if err != nil {
		return KeysetFile{}, err
	}
	search := make([]byte, SearchKeySize)
	if _, err := rand.Read(search); err != nil {
		return KeysetFile{}, err
	}
	return KeysetFile{Current: id, Keys: []Key{k}, SearchKey: base64.StdEncoding.EncodeToString(search)}, nil
}

// NewKey is a fresh random key under id.
func NewKey(id string) (Key, error) {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return Key{}, err
	}
	return Key{ID: id, Key: base64.StdEncoding.EncodeToString(raw)}, nil
}

// Codec is the payload codec over a keyset.
type Codec struct {
	keys   *Keyset
	strict bool
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New is the strict codec of the worker and its clients: Decode refuses clear payloads.
func New(keys *Keyset) *Codec { return &Codec{keys: keys, strict: true} }

// NewLenient is the codec server's: Decode returns clear payloads as they are.
func NewLenient(keys *Keyset) *Codec { return &Codec{keys: keys} }

// Encode seals each payload under the current key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		sealed, err := c.seal(p, CompressAbove)
		if err != nil {
			return nil, err
		}
		out[i] = sealed
	}
	return out, nil
}

// Decode opens each encrypted payload with the key it names.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			if c.strict {
				return nil, fmt.Errorf("%w (encoding %q): this process takes only payloads sealed with its keyset; was it written by a client without --payload-keyset?",
					ErrClearPayload, p.GetMetadata()[converter.MetadataEncoding])
			}
			out[i] = p
			continue
		}
		opened, err := c.open(p)
		if err != nil {
			return nil, err
		}
		out[i] = opened
	}
	return out, nil
}

// seal seals p, compressing it first when it is compressAbove bytes or more and that makes it smaller.
func (c *Codec) seal(p *commonpb.Payload, compressAbove int) (*commonpb.Payload, error) {
	plain, err := proto.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding a payload for encryption: %w", err)
	}
	compression := ""
	if len(plain) >= compressAbove {
		if z, ok := deflate(plain); ok {
			plain, compression = z, CompressionZlib
		}
	}
	id := c.keys.current
	aead := c.keys.aeads[id]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	md := map[string][]byte{
		converter.MetadataEncoding: []byte(Encoding),
		MetadataKeyID:              []byte(id),
	}
	if compression != "" {
		md[MetadataCompression] = []byte(compression)
	}
	return &commonpb.Payload{Metadata: md, Data: aead.Seal(nonce, nonce, plain, additionalData(id, compression))}, nil
}

func (c *Codec) open(p *commonpb.Payload) (*commonpb.Payload, error) {
	id := string(p.Metadata[MetadataKeyID])
	aead, ok := c.keys.aeads[id]
	if !ok {
		return nil, fmt.Errorf("%w: key ID %q (the keyset holds %s)", ErrUnknownKey, id, strings.Join(c.keys.IDs(), ", "))
	}
	compression := string(p.Metadata[MetadataCompression])
	if compression != "" && compression != CompressionZlib {
		return nil, fmt.Errorf("payload under key %q: unknown compression %q", id, compression)
	}
	ns := aead.NonceSize()
	if len(p.Data) < ns+aead.Overhead() {
		return nil, fmt.Errorf("payload under key %q: %d bytes, too short to be sealed", id, len(p.Data))
	}
	plain, err := aead.Open(nil, p.Data[:ns], p.Data[ns:], additionalData(id, compression))
	if err != nil {
		return nil, fmt.Errorf("%w: payload under key %q: altered, or sealed by another key of that ID", ErrAuthentication, id)
	}
	if compression == CompressionZlib {
		if plain, err = inflate(plain); err != nil {
			return nil, fmt.Errorf("payload under key %q: decompressing: %w", id, err)
		}
	}
	var out commonpb.Payload
	if err := proto.Unmarshal(plain, &out); err != nil {
		return nil, fmt.Errorf("payload under key %q: not a payload once opened: %w", id, err)
	}
	return &out, nil
}

// additionalData binds the key ID and the compression flag to the ciphertext.
func additionalData(id, compression string) []byte {
	return []byte("stakeflow-payload-v1\x00" + id + "\x00" + compression)
}

func deflate(b []byte) ([]byte, bool) {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, false
	}
	if err := w.Close(); err != nil {
		return nil, false
	}
	if buf.Len() >= len(b) {
		return nil, false
	}
	return buf.Bytes(), true
}

// maxInflated bounds a decompressed payload: Temporal refuses payloads past 2 MB by default, so a
// stream that inflates past this is not one we wrote.
const maxInflated = 64 << 20

func inflate(b []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	out, err := io.ReadAll(io.LimitReader(r, maxInflated+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxInflated {
		return nil, fmt.Errorf("inflates past %d bytes", maxInflated)
	}
	return out, nil
}

// ErrAuthentication is wrapped by the error of a payload that fails authentication under the key
// it names: altered, or sealed by another key of the same ID.
var ErrAuthentication = errors.New("payload fails authentication")

// DataConverter is the SDK's default converter with c applied to every payload. In workflow code
// (the SDK hands it the workflow's context), a payload sealed under a key the keyset lacks, one
// that fails authentication, or (strict codec) one written in clear panics with the error naming
// the key or the cause instead of returning it: the SDK would otherwise fail the workflow on its
// input (an operation lost, perhaps with a transaction in flight, to a worker deployed with the
// wrong keyset, or without --accept-clear-payloads while operations started in clear are open),
// where a panic fails the workflow task, which Temporal retries, visibly, until a worker that can
// read the history runs it.
func DataConverter(c *Codec) converter.DataConverter {
	return &dataConverter{DataConverter: converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)}
}

// dataConverter is DataConverter's converter outside workflow code.
type dataConverter struct {
	converter.DataConverter
}

var _ converter.ContextAware = (*dataConverter)(nil)

// WithWorkflowContext is the converter of workflow code: it panics on a payload it cannot open.
func (d *dataConverter) WithWorkflowContext(converter.WorkflowContext) converter.DataConverter {
	return workflowConverter{d.DataConverter}
}

// WithContext is the converter of activities and clients: unchanged.
func (d *dataConverter) WithContext(context.Context) converter.DataConverter { return d }

// workflowConverter panics on a payload its codec cannot open.
type workflowConverter struct {
	converter.DataConverter
}

func (w workflowConverter) FromPayload(p *commonpb.Payload, valuePtr any) error {
	return mustOpen(w.DataConverter.FromPayload(p, valuePtr))
}

func (w workflowConverter) FromPayloads(ps *commonpb.Payloads, valuePtrs ...any) error {
	return mustOpen(w.DataConverter.FromPayloads(ps, valuePtrs...))
}

// mustOpen panics with err when it says the keyset cannot open a payload (or, strict, refuses a
// clear one), and returns it otherwise.
func mustOpen(err error) error {
	if errors.Is(err, ErrUnknownKey) || errors.Is(err, ErrAuthentication) || errors.Is(err, ErrClearPayload) {
		panic(fmt.Errorf("payload codec: %w", err))
	}
	return err
}

// FailureConverter moves each failure's message and stack trace into an encoded payload, so they
// are sealed with the rest: failure messages can name addresses and amounts.
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return sealedFailures{temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: dc, EncodeCommonAttributes: true})}
}

// sealedFailures reads a failure without changing it. The SDK's converter opens the encoded
// attributes of the failure it is given in place, and the SDK hands it the failure of a local
// activity's marker before the marker is recorded: the marker then carried the message in clear
// beside its sealed copy.
type sealedFailures struct {
	converter.FailureConverter
}

func (s sealedFailures) FailureToError(f *failurepb.Failure) error {
	if f == nil {
		return nil
	}
	return s.FailureConverter.FailureToError(proto.Clone(f).(*failurepb.Failure))
}
