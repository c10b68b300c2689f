package sandbox

import (
	"context"
	"fmt"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"go.uber.org/zap"
)

// maxCommission is the highest commission (percent) of a validator the
// sandbox chooses on its own.
const maxCommission = 10

// unlistedCommission is the commission of the validator the sandbox creates
// for unlisted-validator mode: sane, so that only its absence from an
// allow-list is wrong with it.
const unlistedCommission = 5

// pickVoteAccount returns the first of candidates that current (the current
// vote accounts of getVoteAccounts) lists with a commission of at most
// maxCommission.
func pickVoteAccount(candidates []solana.PublicKey, current []rpc.VoteAccountsResult) (solana.PublicKey, bool) {
	for _, c := range candidates {
		for _, v := range current {
			if v.VotePubkey.Equals(c) && v.Commission <= maxCommission {
				return c, true
			}
		}
	}
	return solana.PublicKey{}, false
}

// voteAccounts reads getVoteAccounts.
func (s *server) voteAccounts(ctx context.Context) (*rpc.GetVoteAccountsResult, *apiError) {
	res, err := s.rpc.GetVoteAccounts(ctx, &rpc.GetVoteAccountsOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		return nil, runtimeError("getVoteAccounts", err)
	}
	return res, nil
}

// stakeVoteAccount is the vote account a stake goes to: in
// delinquent-validator and unlisted-validator modes the one the mode
// chooses, else Config.DefaultVoteAccount when set, else the first of the
// runtime's start-up vote accounts that is current with a sane commission.
func (s *server) stakeVoteAccount(ctx context.Context, mode HostileMode) (solana.PublicKey, *apiError) {
	switch mode {
	case HostileDelinquentValidator:
		return s.delinquentVoteAccount(ctx)
	case HostileUnlistedValidator:
		return s.unlistedVoteAccount(ctx)
	}
	if !s.vote.IsZero() {
		return s.vote, nil
	}
	res, aerr := s.voteAccounts(ctx)
	if aerr != nil {
		return solana.PublicKey{}, aerr
	}
	if v, ok := pickVoteAccount(s.rt.VoteAccounts(), res.Current); ok {
		return v, nil
	}
	return solana.PublicKey{}, internalError(fmt.Sprintf(
		"Solana runtime has no current vote account with a commission of at most %d%%", maxCommission))
}

// delinquentVoteAccount is the first vote account getVoteAccounts lists as
// delinquent.
func (s *server) delinquentVoteAccount(ctx context.Context) (solana.PublicKey, *apiError) {
	res, aerr := s.voteAccounts(ctx)
	if aerr != nil {
		return solana.PublicKey{}, aerr
	}
	if len(res.Delinquent) == 0 {
		return solana.PublicKey{}, internalError("Solana runtime has no delinquent vote account")
	}
	return res.Delinquent[0].VotePubkey, nil
}

// unlistedVoteAccount is a current vote account with a sane commission that
// is none of the sandbox's own validators; the first time there is none, it
// creates one on the runtime.
func (s *server) unlistedVoteAccount(ctx context.Context) (solana.PublicKey, *apiError) {
	s.unlistedMu.Lock()
	defer s.unlistedMu.Unlock()
	res, aerr := s.voteAccounts(ctx)
	if aerr != nil {
		return solana.PublicKey{}, aerr
	}
	own := append(s.rt.VoteAccounts(), s.vote)
	var others []solana.PublicKey
	for _, v := range res.Current {
		if !v.VotePubkey.IsAnyOf(own...) {
			others = append(others, v.VotePubkey)
		}
	}
	if v, ok := pickVoteAccount(others, res.Current); ok {
		return v, nil
	}
	v, err := s.rt.CreateVoteAccount(ctx, unlistedCommission)
	if err != nil {
		return solana.PublicKey{}, runtimeError("create vote account", err)
	}
	s.log.Info("unlisted vote account created", zap.String("voteAccount", v.String()))
	return v, nil
}
