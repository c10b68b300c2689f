package apiclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RewardType is the kind of a delegator reward.
type RewardType string

// Reward types named by the service.
const (
	RewardTypeStaking   RewardType = "staking"
	RewardTypeConsensus RewardType = "consensus"
	RewardTypeExecution RewardType = "execution"
)

// Currency is the currency of a delegator reward.
type Currency string

// Currencies named by the service.
const (
	CurrencyETH   Currency = "ETH"
	CurrencySOL   Currency = "SOL"
	CurrencyDOT   Currency = "DOT"
	CurrencyKSM   Currency = "KSM"
	CurrencyATOM  Currency = "ATOM"
	CurrencyMATIC Currency = "MATIC"
	CurrencySUI   Currency = "SUI"
	CurrencyGRAM  Currency = "GRAM"
	CurrencyADA   Currency = "ADA"
	CurrencyTIA   Currency = "TIA"
)

// DelegatorAPRQuery is the query of endpoint 1 (Get Delegator APR).
// Zero values are not sent, so the service applies its defaults (period: one
// month back until now; limit 50; offset 0).
type DelegatorAPRQuery struct {
	// Address is the delegator address (required).
	Address string
	// StartAt and FinishAt bound the period; sent as RFC 3339 when non-zero.
	StartAt  time.Time
	FinishAt time.Time
	// StartNumber and FinishNumber bound the staking periods; sent when non-nil.
	StartNumber  *int64
	FinishNumber *int64
	// Limit is the page size, 1..1000; 0 leaves the service's default.
	Limit int
	// Offset is the number of records skipped, 0..10000000.
	Offset int
}

// DelegatorRewardsPage is the result of endpoint 1.
type DelegatorRewardsPage struct {
	Limit    int32                   `json:"limit"`
	Offset   int32                   `json:"offset"`
	StartAt  DateTime                `json:"startAt"`
	FinishAt DateTime                `json:"finishAt"`
	List     []DelegatorRewardRecord `json:"list"`
}

// DelegatorRewardRecord is one staking period of a delegator.
type DelegatorRewardRecord struct {
	StakingPeriod string `json:"stakingPeriod"`
	// StakingPeriodStart and StakingPeriodEnd are optional (zero when absent).
	StakingPeriodStart DateTime `json:"stakingPeriodStart,omitzero"`
	StakingPeriodEnd   DateTime `json:"stakingPeriodEnd,omitzero"`
	Rewards            []Reward `json:"rewards"`
	Validator          string   `json:"validator,omitempty"`
	// NotFinalized is true when the period's rewards are not final yet
	// (false when absent).
	NotFinalized bool `json:"notFinalized,omitempty"`
}

// Reward is one reward of a staking period. Amount, NetAmount and Fee keep the
// service's decimal text exactly as sent (a float64 would round 18-decimal
// token amounts); read them with math/big (big.Rat.SetString) when arithmetic
// is needed.
type Reward struct {
	Validator string      `json:"validator,omitempty"`
	Type      RewardType  `json:"type"`
	Amount    json.Number `json:"amount"`
	NetAmount json.Number `json:"netAmount"`
	Fee       json.Number `json:"fee"`
	Currency  Currency    `json:"currency"`
	Recipient string      `json:"recipient"`
}

// NetworkAPYQuery is the query of endpoint 2 (Get Network APY); all optional,
// zero values are not sent.
type NetworkAPYQuery struct {
	StartAt      time.Time
	FinishAt     time.Time
	StartNumber  *int64
	FinishNumber *int64
	// Limit is the page size, 1..1000; 0 leaves the service's default.
	Limit int
	// Offset is 0..10000000.
	Offset int
}

// NetworkAPYPage is the result of endpoint 2.
type NetworkAPYPage struct {
	Limit    int                `json:"limit"`
	Offset   int                `json:"offset"`
	StartAt  DateTime           `json:"startAt"`
	FinishAt DateTime           `json:"finishAt"`
	List     []NetworkAPYRecord `json:"list"`
}

// NetworkAPYRecord is one staking period's APY. The service does not say which
// fields are required; absent ones decode to zero values (an absent APY is the
// empty json.Number). The APYs keep the service's decimal text exactly.
type NetworkAPYRecord struct {
	StakingPeriodNumber int64       `json:"stakingPeriodNumber"`
	StakingPeriodStart  DateTime    `json:"stakingPeriodStart,omitzero"`
	StakingPeriodEnd    DateTime    `json:"stakingPeriodEnd,omitzero"`
	NetworkAPY          json.Number `json:"networkApy"`
	UpdatedAt           DateTime    `json:"updatedAt,omitzero"`
	ConsensusLayerAPY   json.Number `json:"consensusLayerApy"`
	ExecutionLayerAPY   json.Number `json:"executionLayerApy"`
}

// CelestiaSendRequest is the body of endpoint 3. SignedTransaction may be
// base64 (standard alphabet) or hexadecimal; it is sent as given.
type CelestiaSendRequest struct {
	SignedTransaction string `json:"signedTransaction"`
}

// Celestia broadcast statuses named by the service.
const (
	CelestiaStatusSuccess = "success"
	CelestiaStatusFailed  = "failed"
)

// CelestiaBroadcastResult is the result of endpoint 3.
type CelestiaBroadcastResult struct {
	// Status is CelestiaStatusSuccess or CelestiaStatusFailed.
	Status          string      `json:"status"`
	BlockID         int64       `json:"blockId"`
	Fee             float64     `json:"fee"`
	Gas             CelestiaGas `json:"gas"`
	TransactionHash string      `json:"transactionHash"`
}

// CelestiaGas is the gas accounting of a Celestia broadcast.
type CelestiaGas struct {
	Used   int64 `json:"used"`
	Wanted int64 `json:"wanted"`
}

// PolygonSendRequest is the body of endpoint 4.
type PolygonSendRequest struct {
	// SignedTransaction is the 0x-prefixed hexadecimal signed transaction.
	SignedTransaction string `json:"signedTransaction"`
	StakerAddress     string `json:"stakerAddress"`
}

// VerifyCheckpointProofsRequest is the body of endpoint 5.
type VerifyCheckpointProofsRequest struct {
	EigenPodOwnerAddress string `json:"eigenPodOwnerAddress"`
	ActivateTx           string `json:"activateTx"`
}

// SerializedEVMTransaction is the result of endpoint 5; every field is a string.
type SerializedEVMTransaction struct {
	SerializeTx          string `json:"serializeTx"`
	To                   string `json:"to"`
	GasLimit             string `json:"gasLimit"`
	Data                 string `json:"data"`
	Value                string `json:"value"`
	ChainID              string `json:"chainId"`
	Type                 string `json:"type"`
	MaxFeePerGas         string `json:"maxFeePerGas"`
	MaxPriorityFeePerGas string `json:"maxPriorityFeePerGas"`
}

// HyperliquidWithdrawRequest is the body of endpoint 6. Amount is a JSON
// number written exactly as given (no float rounding), e.g. "12.5"; it must
// be positive.
type HyperliquidWithdrawRequest struct {
	Amount           json.Number `json:"amount"`
	DelegatorAddress string      `json:"delegatorAddress"`
}

// HyperliquidWithdrawal is the result of endpoint 6.
type HyperliquidWithdrawal struct {
	Amount              string   `json:"amount"`
	UnsignedTransaction string   `json:"unsignedTransaction"`
	CreatedAt           DateTime `json:"createdAt"`
}

// ValidatorStatusResult is the result of endpoint 7. The interface types
// statuses as a string but does not fix its form for several vote accounts,
// so it is kept raw; ParseStatuses interprets it.
type ValidatorStatusResult struct {
	Statuses json.RawMessage `json:"statuses"`
}

// StatusesForm is the JSON form statuses took.
type StatusesForm string

// Forms of ValidatorStatusResult.Statuses.
const (
	StatusesString StatusesForm = "string"
	StatusesList   StatusesForm = "list"
	StatusesMap    StatusesForm = "map"
)

// ParsedStatuses is ValidatorStatusResult.Statuses interpreted. Non-string
// list elements and map values are kept as their compact JSON text.
type ParsedStatuses struct {
	Form StatusesForm
	// Text is set for StatusesString.
	Text string
	// List is set for StatusesList.
	List []string
	// Map is set for StatusesMap (vote account to status).
	Map map[string]string
}

// ParseStatuses interprets statuses as a string, a list or a map; any other
// form (or null) is an error.
func (r ValidatorStatusResult) ParseStatuses() (*ParsedStatuses, error) {
	raw := bytes.TrimSpace(r.Statuses)
	if isNull(raw) {
		return nil, fmt.Errorf("apiclient: statuses is absent or null")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("apiclient: statuses: %w", err)
		}
		return &ParsedStatuses{Form: StatusesString, Text: s}, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("apiclient: statuses: %w", err)
		}
		list := make([]string, len(items))
		for i, it := range items {
			list[i] = rawText(it)
		}
		return &ParsedStatuses{Form: StatusesList, List: list}, nil
	case '{':
		var items map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("apiclient: statuses: %w", err)
		}
		m := make(map[string]string, len(items))
		for k, it := range items {
			m[k] = rawText(it)
		}
		return &ParsedStatuses{Form: StatusesMap, Map: m}, nil
	}
	return nil, fmt.Errorf("apiclient: statuses is neither a string, a list nor a map: %.40s", raw)
}

// ForAccounts maps each queried vote account to its status when the form
// allows it: a map is looked up by account; a list, or a comma-separated
// string, is matched by position when its length equals len(accounts); a
// plain string answers a single account. ok is false when the mapping is
// ambiguous or an account is missing.
func (p *ParsedStatuses) ForAccounts(accounts []string) (map[string]string, bool) {
	out := make(map[string]string, len(accounts))
	var positional []string
	switch p.Form {
	case StatusesMap:
		for _, a := range accounts {
			s, ok := p.Map[a]
			if !ok {
				return nil, false
			}
			out[a] = s
		}
		return out, true
	case StatusesList:
		positional = p.List
	case StatusesString:
		if len(accounts) == 1 {
			positional = []string{p.Text}
		} else {
			positional = strings.Split(p.Text, ",")
			for i := range positional {
				positional[i] = strings.TrimSpace(positional[i])
			}
		}
	}
	if len(positional) != len(accounts) || len(accounts) == 0 {
		return nil, false
	}
	for i, a := range accounts {
		out[a] = positional[i]
	}
	return out, true
}

// SSVRequestsQuery is the query of endpoint 8.
type SSVRequestsQuery struct {
	// Limit is the page size, 1..1000; 0 leaves the service's default.
	Limit int
	// Offset is 0..100000.
	Offset int
}

// SetupRequestPage is the result of endpoint 8.
type SetupRequestPage struct {
	Limit      int            `json:"limit"`
	Offset     int            `json:"offset"`
	TotalCount int            `json:"totalCount"`
	List       []SetupRequest `json:"list"`
}

// SetupRequest is one SSV validator set-up request. The four nullable fields
// have no documented type when not null and are kept raw: nil when absent,
// the JSON text `null` when null.
type SetupRequest struct {
	ID                        string           `json:"id"`
	Status                    string           `json:"status"`
	ValidatorsCount           int              `json:"validatorsCount"`
	AmountPerValidator        string           `json:"amountPerValidator"`
	WithdrawalCredentialsType string           `json:"withdrawalCredentialsType"`
	WithdrawalAddress         string           `json:"withdrawalAddress"`
	FeeRecipientAddress       string           `json:"feeRecipientAddress"`
	SSVOwnerAddress           string           `json:"ssvOwnerAddress"`
	Type                      string           `json:"type"`
	OperationPeriodInDays     int              `json:"operationPeriodInDays"`
	LiquidationPeriodInDays   int              `json:"liquidationPeriodInDays"`
	EncryptedShares           []EncryptedShare `json:"encryptedShares"`
	Clusters                  []Cluster        `json:"clusters"`
	ECDHPublicKey             json.RawMessage  `json:"ecdhPublicKey"`
	ValidatorRegistrationTxs  json.RawMessage  `json:"validatorRegistrationTxs"`
	FeeRecipientTx            json.RawMessage  `json:"feeRecipientTx"`
	ApproveTx                 json.RawMessage  `json:"approveTx"`
}

// EncryptedShare is one encrypted key share of a set-up request.
type EncryptedShare struct {
	PublicKey               string `json:"publicKey"`
	Nonce                   string `json:"nonce"`
	SharesData              string `json:"sharesData"`
	ECDHEncryptedPrivateKey string `json:"ecdhEncryptedPrivateKey"`
}

// Cluster is one SSV operator cluster.
type Cluster struct {
	Operators []int64 `json:"operators"`
}

// TONTransactionStatus is the result of endpoint 9.
type TONTransactionStatus struct {
	Address             string `json:"address"`
	Lt                  string `json:"lt"`
	PrevTransactionHash string `json:"prevTransactionHash"`
	PrevTransactionLt   string `json:"prevTransactionLt"`
	// Now is a unix time in seconds; see NowTime.
	Now              int64  `json:"now"`
	OutMessagesCount int    `json:"outMessagesCount"`
	OldStatus        string `json:"oldStatus"`
	EndStatus        string `json:"endStatus"`
	TransactionHash  string `json:"transactionHash"`
}

// NowTime returns Now as a UTC time.
func (s TONTransactionStatus) NowTime() time.Time { return time.Unix(s.Now, 0).UTC() }

// StakeRequest is the body of endpoint 10 (unified stake).
type StakeRequest struct {
	Chain         string `json:"chain"`
	Network       string `json:"network"`
	StakerAddress string `json:"stakerAddress"`
	// Amount is a positive integer written in decimal digits.
	Amount string `json:"amount"`
}

// UnstakeRequest is the body of endpoint 11 (unified unstake).
type UnstakeRequest struct {
	Chain         string       `json:"chain"`
	Network       string       `json:"network"`
	StakerAddress string       `json:"stakerAddress"`
	Extra         UnstakeExtra `json:"extra"`
}

// UnstakeExtra is the `extra` object of an unstake request.
type UnstakeExtra struct {
	// Amount is a positive integer written in decimal digits.
	Amount       string `json:"amount"`
	StakeAccount string `json:"stakeAccount"`
}

// WithdrawRequest is the body of endpoint 12 (unified withdraw).
type WithdrawRequest struct {
	Chain         string        `json:"chain"`
	Network       string        `json:"network"`
	StakerAddress string        `json:"stakerAddress"`
	Extra         WithdrawExtra `json:"extra"`
}

// WithdrawExtra is the `extra` object of a withdraw request.
type WithdrawExtra struct {
	// Amount is a positive integer written in decimal digits.
	Amount string `json:"amount"`
}

// BroadcastRequest is the body of endpoint 13 (unified broadcast).
type BroadcastRequest struct {
	Chain             string `json:"chain"`
	Network           string `json:"network"`
	StakerAddress     string `json:"stakerAddress"`
	SignedTransaction string `json:"signedTransaction"`
}

// UnsignedTransaction is the result of endpoints 10, 11 and 12.
type UnsignedTransaction struct {
	// Amount is present in stake and withdraw responses (nil otherwise). It
	// decodes from a JSON number or a string holding an integer.
	Amount                  *int64            `json:"amount,omitempty"`
	StakerAddress           string            `json:"stakerAddress"`
	UnsignedTransactionData string            `json:"unsignedTransactionData"`
	CreatedAt               DateTime          `json:"createdAt"`
	ExtraData               UnsignedExtraData `json:"extraData"`
}

// UnsignedExtraData is the union of the extraData fields of stake (network,
// feePayer, fromPublicKey, stakeAuthority, withdrawAuthority, voteAccount),
// unstake (network, feePayer, stakeAuthority) and withdraw (network, feePayer,
// withdrawAuthority, recipient, amount); fields an operation lacks stay empty.
type UnsignedExtraData struct {
	Network           string `json:"network,omitempty"`
	FeePayer          string `json:"feePayer,omitempty"`
	FromPublicKey     string `json:"fromPublicKey,omitempty"`
	StakeAuthority    string `json:"stakeAuthority,omitempty"`
	WithdrawAuthority string `json:"withdrawAuthority,omitempty"`
	VoteAccount       string `json:"voteAccount,omitempty"`
	Recipient         string `json:"recipient,omitempty"`
	// Amount is the withdraw amount; its JSON type is not documented, so a
	// number or a string holding an integer are both accepted.
	Amount *FlexInt `json:"amount,omitempty"`
}

// FlexInt is an integer that decodes from a JSON number without fraction or
// exponent, or from a JSON string holding one (e.g. 5000000000 or
// "5000000000"). It encodes as a JSON number.
type FlexInt int64

// UnmarshalJSON accepts an integer number or a string holding an integer.
func (f *FlexInt) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	n, err := parseFlexInt(b)
	if err != nil {
		return fmt.Errorf("apiclient: FlexInt: %w", err)
	}
	*f = FlexInt(n)
	return nil
}

// parseFlexInt reads a JSON integer number, or a JSON string holding one
// (white space around it allowed), that fits in 64 bits.
func parseFlexInt(b []byte) (int64, error) {
	s := string(bytes.TrimSpace(b))
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		s = strings.TrimSpace(s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%.40q is not an integer", s)
	}
	return n, nil
}

// MarshalJSON writes f as a JSON number.
func (f FlexInt) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, int64(f), 10), nil
}

// BroadcastResult is the result of endpoint 13.
type BroadcastResult struct {
	ExtraData BroadcastExtraData `json:"extraData"`
}

// BroadcastExtraData is the outcome of a unified broadcast.
type BroadcastExtraData struct {
	TransactionID  string   `json:"transactionId"`
	Slot           uint64   `json:"slot"`
	SignerAccounts []string `json:"signerAccounts"`
	CreatedAt      DateTime `json:"createdAt"`
}
