package celestia

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// prover reads the blocks a step's builds can be in (FromHeight to the highest timeout height),
// once each, for the chain's word on the step's sequence: one of the builds, or another
// transaction holding the sequence.
type prover struct {
	c  Chain
	in ConfirmInput
	// ours is the set of the builds' hashes (upper case).
	ours map[string]bool
	// maxTimeout is the highest timeout height of the builds; 0 when one has none (it can land at
	// any height: no block range bounds it).
	maxTimeout uint64
	// next is the next height to read.
	next uint64
	// oursHash, holder: a build found in block oursHeight; another transaction holding the
	// sequence, found in block holderHeight.
	oursHash, holder         string
	oursHeight, holderHeight uint64
}

func newProver(c Chain, in ConfirmInput) *prover {
	p := &prover{c: c, in: in, ours: map[string]bool{}, next: in.FromHeight}
	for _, h := range in.Hashes {
		p.ours[strings.ToUpper(h)] = true
	}
	if len(in.TimeoutHeights) == len(in.Hashes) && len(in.Hashes) > 0 {
		for _, t := range in.TimeoutHeights {
			if t == 0 {
				p.maxTimeout = 0
				break
			}
			p.maxTimeout = max(p.maxTimeout, t)
		}
	}
	return p
}

// timeoutPassed reports whether the chain, at height, is past every build's timeout height.
func (p *prover) timeoutPassed(height uint64) bool { return p.maxTimeout > 0 && height > p.maxTimeout }

// complete reports whether every block a build can be in has been read.
func (p *prover) complete() bool {
	return p.maxTimeout > 0 && p.in.FromHeight > 0 && p.next > p.maxTimeout
}

// scan reads the blocks not read yet up to the chain's height (and the highest timeout height),
// stopping at the first the node does not have yet, or once a build or the sequence's holder is
// found.
func (p *prover) scan(ctx context.Context, height uint64) error {
	if p.in.FromHeight == 0 {
		return nil
	}
	to := height
	if p.maxTimeout > 0 {
		to = min(to, p.maxTimeout)
	}
	for ; p.next <= to && p.oursHash == "" && p.holder == ""; p.next++ {
		b, err := p.c.Block(ctx, p.next)
		if err != nil {
			return classify(fmt.Sprintf("reading block %d", p.next), err)
		}
		if b == nil {
			return nil
		}
		for _, raw := range b.Txs {
			hash := signercosmos.TxHash(raw)
			switch {
			case p.ours[hash]:
				p.oursHash, p.oursHeight = hash, p.next
			case holds(raw, p.in.Delegator, p.in.Sequence):
				p.holder, p.holderHeight = hash, p.next
			}
		}
	}
	return nil
}

// holds reports whether the transaction raw is signed by delegator's key at sequence: its
// auth_info's signer infos (cosmos.tx.v1beta1.TxRaw field 2, AuthInfo field 1) are read with
// their public key (SignerInfo field 1, a secp256k1 PubKey Any) and sequence (field 3); other
// fields are skipped, so a transaction of any shape can be read. A signer info without a public
// key proves nothing.
func holds(raw []byte, delegator string, sequence uint64) bool {
	for _, ai := range fields(raw, 2) {
		for _, si := range fields(ai, 1) {
			var pub []byte
			for _, a := range fields(si, 1) {
				if typ := fields(a, 1); len(typ) == 1 && string(typ[0]) == tx.TypeSecp256k1PubKey {
					for _, v := range fields(a, 2) {
						if k := fields(v, 1); len(k) == 1 {
							pub = k[0]
						}
					}
				}
			}
			seq, ok := varint(si, 3)
			if pub == nil || !ok || seq != sequence {
				continue
			}
			if addr, err := tx.Address(signercosmos.AccountPrefix, pub); err == nil && addr == delegator {
				return true
			}
		}
	}
	return false
}

// fields returns the values of the length-delimited field num of message b (nil when b does not
// parse).
func fields(b []byte, num protowire.Number) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil
			}
			out = append(out, v)
			b = b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil
		}
		b = b[l:]
	}
	return out
}

// varint returns the last value of the varint field num of message b (0 and true when absent, as
// protobuf reads a missing scalar).
func varint(b []byte, num protowire.Number) (uint64, bool) {
	var v uint64
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return 0, false
		}
		b = b[l:]
		if n == num && typ == protowire.VarintType {
			x, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return 0, false
			}
			v, b = x, b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return 0, false
		}
		b = b[l:]
	}
	return v, true
}
