package stack

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/codecserver"
)

// CodecTokenFile is the name, in Options.Dir, of the file holding the codec server's token.
const CodecTokenFile = "codec-token"

// CodecToken is the codec server's token (Options.CodecServer): a new one on every start.
func (s *Stack) CodecToken() string { return s.codecToken }

// bindCodecServer binds the codec server's socket and makes its token, before the dev server
// starts: the Web UI is given the endpoint on the dev server's command line.
func (s *Stack) bindCodecServer() error {
	if s.opts.PayloadKeyset == "" {
		return errors.New("stack: CodecServer requires PayloadKeyset (the keyset the codec server decodes with)")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	s.codecToken = hex.EncodeToString(raw)
	s.CodecTokenFile = filepath.Join(s.opts.Dir, CodecTokenFile)
	if err := os.WriteFile(s.CodecTokenFile, []byte(s.codecToken+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing the codec server's token: %w", err)
	}
	// WriteFile keeps the mode of a file that was there: the token is for its owner only.
	if err := os.Chmod(s.CodecTokenFile, 0o600); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("binding the codec server's socket: %w", err)
	}
	s.codecLn, s.CodecURL = ln, "http://"+ln.Addr().String()
	return nil
}

// uiCodecEndpoint is the endpoint the Web UI is given: the dev server's UI takes a URL but no
// header, so the token is the path's first segment (internal/codecserver).
func (s *Stack) uiCodecEndpoint() string {
	return s.CodecURL + "/" + s.codecToken
}

// serveCodec serves the codec server on its socket, to the Web UI's origins (known once the dev
// server has its UI port) and to clients without an origin (the Temporal CLI).
func (s *Stack) serveCodec() error {
	keys, err := codec.LoadKeyset(s.opts.PayloadKeyset)
	if err != nil {
		return err
	}
	var origins []string
	if s.UIURL != "" {
		u, err := url.Parse(s.UIURL)
		if err != nil {
			return err
		}
		// A browser on this machine reaches the UI as 127.0.0.1 or as localhost.
		origins = append(origins, s.UIURL, "http://localhost:"+u.Port())
	}
	h, err := codecserver.New(codecserver.Options{
		Keys: keys, Tokens: []string{s.codecToken}, UIOrigins: origins, Logger: s.opts.Logger.Named("codec"),
	})
	if err != nil {
		return fmt.Errorf("codec server: %w", err)
	}
	s.codecSrv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.codecSrv.Serve(s.codecLn) }()
	return nil
}

// WriteNewKeyset writes a keyset of one fresh random key, current, under id to path (0600), for a
// stack that encrypts (Options.PayloadKeyset). It refuses to replace a file: payloads sealed
// under a lost key cannot be read again.
func WriteNewKeyset(path, id string) error {
	kf, err := codec.NewKeyFile(id)
	if err != nil {
		return err
	}
	raw, err := json.MarshalIndent(kf, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing a new payload keyset: %w", err)
	}
	if _, err := f.Write(append(raw, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing a new payload keyset %s: %w", path, err)
	}
	return f.Close()
}
