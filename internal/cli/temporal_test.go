package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
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
