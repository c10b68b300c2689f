package starter

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/stakeflow/stakeflow/approval"

	"github.com/stakeflow/stakeflow/secretfile"
)

// A statementSigner signs statements (package approval) with one Ed25519 key: a key file's or
// one an SSH agent holds. The private key never leaves it.
type statementSigner interface {
	// Public is the signer's public key.
	Public() ed25519.PublicKey
	// Sign signs the statement's bytes (plain Ed25519, as an SSH agent signs for an ssh-ed25519 key).
	Sign(text string) ([]byte, error)
}

// signing are the flags that choose how a command signs: a key file or the SSH agent
// (SSH_AUTH_SOCK), with a fingerprint picking one of the agent's keys.
type signing struct {
	keyFile     string
	sshAgent    bool
	fingerprint string
}

// register adds the signing flags; keyFlag names the key file's flag (--key, --sign-key).
func (s *signing) register(fs *flag.FlagSet, keyFlag, what string) {
	fs.StringVar(&s.keyFile, keyFlag, "", "unencrypted OpenSSH ed25519 private key file (mode 0600) to sign "+what+" with")
	fs.BoolVar(&s.sshAgent, "ssh-agent", false, "sign "+what+" with an ed25519 key held by the SSH agent (SSH_AUTH_SOCK)")
	fs.StringVar(&s.fingerprint, "key-fingerprint", "", "the agent's key to sign with (SHA256:..., as ssh-add -l prints it) when it holds several")
}

// set reports whether the flags ask for a signature.
func (s *signing) set() bool { return s.keyFile != "" || s.sshAgent }

// signer opens the signer the flags name (nil when they name none); close releases it.
func (s *signing) signer(keyFlag string) (sg statementSigner, close func(), err error) {
	switch {
	case s.keyFile != "" && s.sshAgent:
		return nil, nil, &UsageError{Msg: fmt.Sprintf("give --%s or --ssh-agent, not both", keyFlag)}
	case s.fingerprint != "" && !s.sshAgent:
		return nil, nil, &UsageError{Msg: "--key-fingerprint picks one of the SSH agent's keys: give --ssh-agent"}
	case s.keyFile != "":
		k, err := readKeyFile(keyFlag, s.keyFile)
		if err != nil {
			return nil, nil, err
		}
		return k, func() {}, nil
	case s.sshAgent:
		sock := os.Getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, nil, errors.New("--ssh-agent: SSH_AUTH_SOCK is not set (start ssh-agent and ssh-add your key)")
		}
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, nil, fmt.Errorf("--ssh-agent: cannot reach the agent at SSH_AUTH_SOCK: %w", err)
		}
		a, err := agentKey(agent.NewClient(conn), s.fingerprint)
		if err != nil {
			_ = conn.Close()
			return nil, nil, err
		}
		return a, func() { _ = conn.Close() }, nil
	}
	return nil, func() {}, nil
}

// fileKey is an Ed25519 key read from a file.
type fileKey struct{ priv ed25519.PrivateKey }

func (k fileKey) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }
func (k fileKey) Sign(text string) ([]byte, error) {
	return ed25519.Sign(k.priv, []byte(text)), nil
}

// readKeyFile reads an unencrypted OpenSSH ed25519 private key. A file that its group or others
// may read is refused (as ssh refuses it), and so is an encrypted key or a key of another type;
// no error repeats the file's bytes.
func readKeyFile(flagName, path string) (statementSigner, error) {
	data, err := secretfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	defer clear(data)
	raw, err := ssh.ParseRawPrivateKey(data)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("--%s %s: the key is encrypted: add it to your SSH agent (ssh-add) and use --ssh-agent", flagName, path)
	case err != nil:
		return nil, fmt.Errorf("--%s %s: not an OpenSSH private key file", flagName, path)
	}
	switch k := raw.(type) {
	case *ed25519.PrivateKey:
		return fileKey{priv: *k}, nil
	case ed25519.PrivateKey:
		return fileKey{priv: k}, nil
	}
	return nil, fmt.Errorf("--%s %s: a %T key; statements are signed with ed25519 keys", flagName, path, raw)
}

// agentSigner signs with one of an SSH agent's ed25519 keys.
type agentSigner struct {
	agent agent.ExtendedAgent
	key   ssh.PublicKey
	pub   ed25519.PublicKey
}

// agentKey picks the agent's ed25519 key: the one of fingerprint, or its only one.
func agentKey(a agent.ExtendedAgent, fingerprint string) (*agentSigner, error) {
	keys, err := a.List()
	if err != nil {
		return nil, fmt.Errorf("--ssh-agent: listing the agent's keys: %w", err)
	}
	var found []*agentSigner
	var names []string
	for _, k := range keys {
		pk, err := ssh.ParsePublicKey(k.Blob)
		if err != nil || pk.Type() != ssh.KeyAlgoED25519 {
			continue
		}
		fp := ssh.FingerprintSHA256(pk)
		if fingerprint != "" && fp != fingerprint {
			continue
		}
		cpk, ok := pk.(ssh.CryptoPublicKey)
		if !ok {
			continue
		}
		pub, ok := cpk.CryptoPublicKey().(ed25519.PublicKey)
		if !ok {
			continue
		}
		found = append(found, &agentSigner{agent: a, key: pk, pub: pub})
		names = append(names, fp)
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && fingerprint != "":
		return nil, fmt.Errorf("--ssh-agent: the agent holds no ed25519 key %s (ssh-add -l lists its keys)", fingerprint)
	case len(found) == 0:
		return nil, errors.New("--ssh-agent: the agent holds no ed25519 key (ssh-add yours)")
	}
	return nil, fmt.Errorf("--ssh-agent: the agent holds %d ed25519 keys (%s): pick one with --key-fingerprint", len(found), strings.Join(names, ", "))
}

func (s *agentSigner) Public() ed25519.PublicKey { return s.pub }

func (s *agentSigner) Sign(text string) ([]byte, error) {
	sig, err := s.agent.Sign(s.key, []byte(text))
	if err != nil {
		return nil, fmt.Errorf("the SSH agent did not sign (a confirmation refused, the key removed?): %w", err)
	}
	if sig.Format != ssh.KeyAlgoED25519 || len(sig.Blob) != ed25519.SignatureSize {
		return nil, fmt.Errorf("the SSH agent answered a %s signature of %d bytes, not ssh-ed25519", sig.Format, len(sig.Blob))
	}
	return sig.Blob, nil
}

// signStatement signs text with sg and checks the signature before it is sent.
func signStatement(sg statementSigner, text string) (approval.Signed, error) {
	sig, err := sg.Sign(text)
	if err != nil {
		return approval.Signed{}, err
	}
	pub := sg.Public()
	if !ed25519.Verify(pub, []byte(text), sig) {
		return approval.Signed{}, fmt.Errorf("the signature made with key %s does not verify", approval.Fingerprint(pub))
	}
	out := approval.Signed{Statement: text, PublicKey: base64.StdEncoding.EncodeToString(pub), Signature: base64.StdEncoding.EncodeToString(sig)}
	if v, err := out.Verify(); err != nil || !bytes.Equal(v, pub) {
		return approval.Signed{}, errors.New("the signed statement does not verify")
	}
	return out, nil
}
