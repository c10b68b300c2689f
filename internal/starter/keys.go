package starter

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
)

// keysCmd imports a key: keys import --chain celestia --dir DIR --passphrase-file FILE reads a
// BIP-39 mnemonic from the terminal (or standard input) and writes the key at m/44'/118'/0'/0/0
// as a keystore v3 file. The mnemonic is never stored, logged or echoed.
func (r *Session) keysCmd(fs *flag.FlagSet, verb string, stdin io.Reader) (func(context.Context) error, error) {
	if verb != "import" {
		return nil, &UsageError{Msg: fmt.Sprintf("keys: unknown command %q (import)", verb)}
	}
	var chain, dir, passFile string
	fs.StringVar(&chain, "chain", "", "chain of the key: celestia")
	fs.StringVar(&dir, "dir", "", "directory of the keystore files (the worker's --celestia-keys)")
	fs.StringVar(&passFile, "passphrase-file", "", "file holding the keystore passphrase (the worker's --celestia-passphrase-file)")
	return func(context.Context) error {
		fail := func(msg string) error { return &UsageError{Msg: "keys import: " + msg} }
		if chain != "celestia" {
			return fail(fmt.Sprintf("--chain %q: want celestia", chain))
		}
		if dir == "" || passFile == "" {
			return fail("--dir and --passphrase-file are required")
		}
		pass, err := os.ReadFile(passFile)
		if err != nil {
			return fail(fmt.Sprintf("--passphrase-file: %v", err))
		}
		passphrase := strings.TrimRight(string(pass), "\r\n")
		clear(pass)
		mnemonic, err := readMnemonic(r.out, stdin)
		if err != nil {
			return fail(err.Error())
		}
		addr, path, err := signercosmos.ImportMnemonic(mnemonic, passphrase, dir)
		if err != nil {
			return fail(err.Error())
		}
		return r.print(fmt.Sprintf("imported %s (%s) into %s", addr, signercosmos.HDPath, path),
			map[string]string{"chain": chain, "address": addr, "file": path})
	}, nil
}

// readMnemonic reads one line from the terminal without echo, or from stdin when it is not one.
func readMnemonic(out io.Writer, stdin io.Reader) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(out, "mnemonic (not echoed): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(out)
		if err != nil {
			return "", fmt.Errorf("reading the mnemonic: %v", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		return "", errors.New("reading the mnemonic from standard input: nothing read")
	}
	return strings.TrimSpace(line), nil
}
