package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/codec"
)

func TestCompressionSetting(t *testing.T) {
	for name, want := range map[string]client.GrpcCompression{
		"":              &client.GrpcCompressionGzip{},
		CompressionGzip: &client.GrpcCompressionGzip{},
		CompressionNone: &client.GrpcCompressionNone{},
	} {
		opts, err := (&Temporal{Address: "127.0.0.1:7233", Compression: name}).Options(zap.NewNop())
		require.NoError(t, err, name)
		require.IsType(t, want, opts.ConnectionOptions.GrpcCompression, name)
	}
	_, err := (&Temporal{Address: "127.0.0.1:7233", Compression: "zstd"}).Options(zap.NewNop())
	require.ErrorContains(t, err, `--grpc-compression "zstd": want gzip or none`)
}

func writeKeyset(t *testing.T) string {
	t.Helper()
	f, err := codec.NewKeyFile("k1")
	require.NoError(t, err)
	b, err := json.Marshal(f)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "keyset.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func TestEncryptSetsTheCodecOnEveryConverter(t *testing.T) {
	keyset := writeKeyset(t)
	opts, err := (&Temporal{Address: "127.0.0.1:7233", PayloadKeyset: keyset}).Options(zap.NewNop())
	require.NoError(t, err)
	p, err := opts.DataConverter.ToPayload("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU")
	require.NoError(t, err)
	require.Equal(t, codec.Encoding, string(p.Metadata["encoding"]))
	f := opts.FailureConverter.ErrorToFailure(errors.New("refused 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"))
	require.NotContains(t, f.GetMessage(), "7xKX")
	require.Len(t, opts.Interceptors, 2, "the converter's and the search tagger's (workflows.ConverterInterceptor, workflows.TaggerInterceptor)")
	tg, err := (&Temporal{PayloadKeyset: keyset}).Tagger()
	require.NoError(t, err)
	require.True(t, tg.Tags(), "the keyset's search key")

	clear, err := converter.GetDefaultDataConverter().ToPayload("in clear")
	require.NoError(t, err)
	var s string
	require.ErrorIs(t, opts.DataConverter.FromPayload(clear, &s), codec.ErrClearPayload)

	lenient, err := (&Temporal{Address: "127.0.0.1:7233", PayloadKeyset: keyset, AcceptClearPayloads: true}).Options(zap.NewNop())
	require.NoError(t, err)
	require.NoError(t, lenient.DataConverter.FromPayload(clear, &s))
	require.Equal(t, "in clear", s)
	require.NoError(t, lenient.DataConverter.FromPayload(p, &s))
	require.Equal(t, "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", s)
}

func TestEncryptRefusesBadSettings(t *testing.T) {
	_, err := (&Temporal{Address: "127.0.0.1:7233", AcceptClearPayloads: true}).Options(zap.NewNop())
	require.ErrorContains(t, err, "--accept-clear-payloads goes with --payload-keyset")
	keyset := writeKeyset(t)
	require.NoError(t, os.Chmod(keyset, 0o640))
	_, err = (&Temporal{Address: "127.0.0.1:7233", PayloadKeyset: keyset}).Options(zap.NewNop())
	require.ErrorContains(t, err, "--payload-keyset")
	require.ErrorContains(t, err, "0640")
	opts, err := (&Temporal{Address: "127.0.0.1:7233"}).Options(zap.NewNop())
	require.NoError(t, err)
	require.Nil(t, opts.DataConverter, "without a keyset the SDK's default converter")
}
