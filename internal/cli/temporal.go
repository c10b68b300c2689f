package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/workflows"
)

// Temporal holds the settings of a connection to a Temporal frontend.
type Temporal struct {
	Address   string
	Namespace string
	TLSCert   string
	TLSKey    string
	TLSCA     string
	TLSServer string
	// Compression is the gRPC compression of requests to Temporal: gzip (the default) or none.
	Compression string
	// TaskQueuePrefix begins every module's task queue (workflows.TaskQueueOf): the worker polls
	// and the starter starts operations on prefix-<module>.
	TaskQueuePrefix string
	// PayloadKeyset is the keyset file of the payload codec (codec.LoadKeyset): when set, every
	// payload and failure this process writes to Temporal is encrypted, and it reads only
	// encrypted ones.
	PayloadKeyset string
	// AcceptClearPayloads reads payloads written in clear beside encrypted ones: for the switch to
	// encryption, while operations started before it finish.
	AcceptClearPayloads bool
}

// TaskQueue is the task queue of module under these settings.
func (t *Temporal) TaskQueue(module string) string {
	prefix := t.TaskQueuePrefix
	if prefix == "" {
		prefix = workflows.DefaultTaskQueuePrefix
	}
	return workflows.TaskQueueOf(prefix, module)
}

// Compression settings of the connection to Temporal.
const (
	// CompressionGzip compresses requests and responses: less traffic, more CPU on both ends.
	CompressionGzip = "gzip"
	// CompressionNone sends them as they are: for a Temporal cluster on the same network.
	CompressionNone = "none"
)

// Register adds the connection flags to fs.
func (t *Temporal) Register(fs *flag.FlagSet) {
	fs.StringVar(&t.Address, "temporal-address", "127.0.0.1:7233", "Temporal frontend host:port")
	fs.StringVar(&t.Namespace, "namespace", "default", "Temporal namespace")
	fs.StringVar(&t.TLSCert, "tls-cert", "", "client certificate file (mTLS)")
	fs.StringVar(&t.TLSKey, "tls-key", "", "client private key file (mTLS)")
	fs.StringVar(&t.TLSCA, "tls-ca", "", "CA bundle file that signed the server certificate")
	fs.StringVar(&t.TLSServer, "tls-server-name", "", "server name to verify (defaults to the address host)")
	fs.StringVar(&t.TaskQueuePrefix, "task-queue-prefix", workflows.DefaultTaskQueuePrefix, "first part of every task queue: each chain's operations run on <prefix>-<module> (solana, evm, celestia, hyperliquid, ton, jobs)")
	fs.StringVar(&t.PayloadKeyset, "payload-keyset", "", "keyset file (JSON, 0600) of the payload codec: every payload and failure written to Temporal is encrypted with its current key (AES-256-GCM) and read with the key it names; the worker, the starter and the codec server take the same file (docs/encryption.md)")
	fs.BoolVar(&t.AcceptClearPayloads, "accept-clear-payloads", false, "with --payload-keyset, also read payloads written in clear: only while switching encryption on, until the operations started before the switch have finished (docs/encryption.md)")
	fs.StringVar(&t.Compression, "grpc-compression", CompressionGzip, "gRPC compression to Temporal: gzip, or none (saves CPU on the worker and the server when they share a network)")
}

// GRPCCompression is the SDK setting for a compression name; "" is gzip.
func GRPCCompression(name string) (client.GrpcCompression, error) {
	switch name {
	case "", CompressionGzip:
		return &client.GrpcCompressionGzip{}, nil
	case CompressionNone:
		return &client.GrpcCompressionNone{}, nil
	}
	return nil, fmt.Errorf("--grpc-compression %q: want gzip or none", name)
}

// Options are the client options for these settings, logging through logger.
func (t *Temporal) Options(logger *zap.Logger) (client.Options, error) {
	opts := client.Options{
		HostPort:  t.Address,
		Namespace: t.Namespace,
		Logger:    TemporalLogger(logger),
	}
	compression, err := GRPCCompression(t.Compression)
	if err != nil {
		return opts, err
	}
	opts.ConnectionOptions.GrpcCompression = compression
	if err := t.Encrypt(&opts); err != nil {
		return opts, err
	}
	if t.TLSCert == "" && t.TLSKey == "" && t.TLSCA == "" {
		return opts, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.TLSServer}
	if t.TLSCert != "" || t.TLSKey != "" {
		if t.TLSCert == "" || t.TLSKey == "" {
			return opts, errors.New("--tls-cert and --tls-key go together")
		}
		pair, err := tls.LoadX509KeyPair(t.TLSCert, t.TLSKey)
		if err != nil {
			return opts, fmt.Errorf("loading TLS client certificate %s: %w", t.TLSCert, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.TLSCA != "" {
		pem, err := os.ReadFile(t.TLSCA)
		if err != nil {
			return opts, fmt.Errorf("reading TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return opts, fmt.Errorf("TLS CA %s holds no PEM certificate", t.TLSCA)
		}
		cfg.RootCAs = pool
	}
	opts.ConnectionOptions.TLS = cfg
	return opts, nil
}

// Encrypt sets the payload codec of the keyset file in opts: the data converter, the failure
// converter (failure messages and stack traces sealed too) and the interceptors that hand the
// converter and the keyset's search tagger to workflow code (workflows.TaggerInterceptor: the
// confidential search attributes are written as tags). Without a keyset it leaves opts as they are.
func (t *Temporal) Encrypt(opts *client.Options) error {
	keys, err := t.keyset()
	if err != nil || keys == nil {
		return err
	}
	dc := t.converter(keys)
	opts.DataConverter = dc
	opts.FailureConverter = codec.FailureConverter(dc)
	opts.Interceptors = append(opts.Interceptors, workflows.ConverterInterceptor(dc), workflows.TaggerInterceptor(keys.Tagger()))
	return nil
}

// keyset loads the keyset file; nil without one.
func (t *Temporal) keyset() (*codec.Keyset, error) {
	if t.PayloadKeyset == "" {
		if t.AcceptClearPayloads {
			return nil, errors.New("--accept-clear-payloads goes with --payload-keyset: without a keyset every payload is clear")
		}
		return nil, nil
	}
	keys, err := codec.LoadKeyset(t.PayloadKeyset)
	if err != nil {
		return nil, fmt.Errorf("--payload-keyset: %w", err)
	}
	return keys, nil
}

// converter is the keyset's payload codec over the SDK's default converter: strict, or lenient
// with AcceptClearPayloads.
func (t *Temporal) converter(keys *codec.Keyset) converter.DataConverter {
	if t.AcceptClearPayloads {
		return codec.DataConverter(codec.NewLenient(keys))
	}
	return codec.DataConverter(codec.New(keys))
}

// DataConverter is the data converter of these settings: the keyset's payload codec over the
// SDK's default converter, or the default without a keyset. The starter opens sealed failure
// messages with it (converter.DecodeCommonFailureAttributes).
func (t *Temporal) DataConverter() (converter.DataConverter, error) {
	keys, err := t.keyset()
	if err != nil {
		return nil, err
	}
	if keys == nil {
		return converter.GetDefaultDataConverter(), nil
	}
	return t.converter(keys), nil
}

// Tagger is the search tagger of the keyset file (codec.Keyset.Tagger), with which the starter
// writes and searches the confidential search attributes as the worker's workflows write them;
// nil without a keyset (they are written clear).
func (t *Temporal) Tagger() (*codec.Tagger, error) {
	if t.PayloadKeyset == "" {
		return nil, nil
	}
	keys, err := t.keyset()
	if err != nil {
		return nil, err
	}
	return keys.Tagger(), nil
}

// Dial connects to Temporal.
func (t *Temporal) Dial(logger *zap.Logger) (client.Client, error) {
	opts, err := t.Options(logger)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s (namespace %s): %w", t.Address, t.Namespace, err)
	}
	return c, nil
}

// TemporalLogger hands a zap logger to the Temporal SDK.
func TemporalLogger(logger *zap.Logger) log.Logger {
	return log.NewStructuredLogger(slog.New(zapslog.NewHandler(logger.Core())))
}

// NewLogger builds the process's zap logger: JSON for production, console for development.
func NewLogger(format, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	var cfg zap.Config
	switch format {
	case "json":
		cfg = zap.NewProductionConfig()
	case "console":
		cfg = zap.NewDevelopmentConfig()
		cfg.DisableStacktrace = true
	default:
		return nil, fmt.Errorf("log format %q: want json or console", format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	return cfg.Build()
}
