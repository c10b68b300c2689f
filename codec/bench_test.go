package codec

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// recordedPayloads are the payloads of the committed replay histories of every workflow type:
// what the worker writes in ordinary runs.
func recordedPayloads(b *testing.B) []*commonpb.Payload {
	b.Helper()
	files, err := filepath.Glob("../workflows/*/testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		b.Fatalf("no recorded histories: %v", err)
	}
	var out []*commonpb.Payload
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var h historypb.History
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, &h); err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		err = proxy.VisitPayloads(context.Background(), &h, proxy.VisitPayloadsOptions{
			SkipSearchAttributes: true,
			Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
				out = append(out, ps...)
				return ps, nil
			},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// BenchmarkSealRecordedPayloads seals every payload of the recorded histories, with compression
// from CompressAbove (as shipped) and without, and reports the stored bytes against the clear
// ones: what compression saves, and what it costs in time.
func BenchmarkSealRecordedPayloads(b *testing.B) {
	payloads := recordedPayloads(b)
	clearBytes := 0
	for _, p := range payloads {
		clearBytes += proto.Size(p)
	}
	ks, err := NewKeyFile("k1")
	if err != nil {
		b.Fatal(err)
	}
	keys := mustKeyset(b, ks)
	for _, mode := range []struct {
		name          string
		compressAbove int
	}{{"compressed", CompressAbove}, {"uncompressed", math.MaxInt}} {
		b.Run(mode.name, func(b *testing.B) {
			c := New(keys)
			stored := 0
			b.ResetTimer()
			for range b.N {
				stored = 0
				for _, p := range payloads {
					out, err := c.seal(p, mode.compressAbove)
					if err != nil {
						b.Fatal(err)
					}
					stored += proto.Size(out)
				}
			}
			b.ReportMetric(float64(len(payloads)), "payloads")
			b.ReportMetric(float64(stored)/float64(clearBytes), "stored/clear")
		})
	}
}

// BenchmarkOpenRecordedPayloads opens them again.
func BenchmarkOpenRecordedPayloads(b *testing.B) {
	payloads := recordedPayloads(b)
	ks, err := NewKeyFile("k1")
	if err != nil {
		b.Fatal(err)
	}
	c := New(mustKeyset(b, ks))
	sealed, err := c.Encode(payloads)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := c.Decode(sealed); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(payloads)), "payloads")
}

func mustKeyset(b *testing.B, f KeysetFile) *Keyset {
	b.Helper()
	raw, err := json.Marshal(f)
	if err != nil {
		b.Fatal(err)
	}
	ks, err := ParseKeyset(raw)
	if err != nil {
		b.Fatal(err)
	}
	return ks
}
