package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// periodOrigin is where staking period 0 of every network starts.
var periodOrigin = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// apyNetworks holds the staking period length and the base APY (percent)
// of each network of endpoint 2.
var apyNetworks = map[string]struct {
	period time.Duration
	apy    float64
}{
	"solana":   {48 * time.Hour, 6.9},
	"polkadot": {24 * time.Hour, 14.6},
	"kusama":   {6 * time.Hour, 16.8},
	"sui":      {24 * time.Hour, 3.3},
	"ethereum": {24 * time.Hour, 3.1},
	"celestia": {24 * time.Hour, 10.4},
}

// aprNetworks are the network values of endpoint 1.
var aprNetworks = []string{"ethereum"}

// Page limits of the spec.
const (
	defaultLimit    = 50
	maxLimit        = 1000
	maxOffsetData   = 10_000_000
	maxOffsetSSV    = 100_000
	ethRewardStake  = 32.0
	ethValidatorFee = 0.1
)

// unitFloat is a deterministic value in [0, 1) derived from parts.
func unitFloat(parts ...string) float64 {
	h := sha256.Sum256([]byte(strings.Join(parts, "|")))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / float64(1<<53)
}

// hexDigest is a deterministic hex string of n bytes derived from parts.
func hexDigest(n int, parts ...string) string {
	var out []byte
	for i := 0; len(out) < n; i++ {
		h := sha256.Sum256([]byte(strings.Join(append(parts, strconv.Itoa(i)), "|")))
		out = append(out, h[:]...)
	}
	return hex.EncodeToString(out[:n])
}

// round rounds v to d decimals.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// periodQuery is the parsed period filter and page of endpoints 1 and 2.
type periodQuery struct {
	start, finish   time.Time
	startN, finishN *int64
	limit, offset   int64
}

// readPeriodQuery parses startAt, finishAt, startNumber, finishNumber,
// limit and offset.
func (s *server) readPeriodQuery(r *http.Request, errs *[]fieldError) periodQuery {
	q := r.URL.Query()
	now := s.now().UTC()
	var pq periodQuery
	pq.finish = timeQuery(q, "finishAt", now, errs)
	pq.start = timeQuery(q, "startAt", pq.finish.AddDate(0, -1, 0), errs)
	pq.startN = optInt(q, "startNumber", errs)
	pq.finishN = optInt(q, "finishNumber", errs)
	pq.limit = intQuery(q, "limit", 1, maxLimit, defaultLimit, errs)
	pq.offset = intQuery(q, "offset", 0, maxOffsetData, 0, errs)
	if pq.start.After(pq.finish) {
		*errs = append(*errs, fieldErr("startAt", "isBefore", "startAt must not be after finishAt"))
	}
	if pq.startN != nil && pq.finishN != nil && *pq.startN > *pq.finishN {
		*errs = append(*errs, fieldErr("startNumber", "isBefore", "startNumber must not be greater than finishNumber"))
	}
	return pq
}

// periods returns the page of period numbers, ascending, that overlap the
// time range and the number range.
func (pq periodQuery) periods(length time.Duration) []int64 {
	first := int64(pq.start.Sub(periodOrigin) / length)
	last := int64(pq.finish.Sub(periodOrigin) / length)
	if pq.finish.Before(periodOrigin) {
		return nil
	}
	first = max(first, 0)
	if pq.startN != nil {
		first = max(first, *pq.startN)
	}
	if pq.finishN != nil {
		last = min(last, *pq.finishN)
	}
	first += pq.offset
	var out []int64
	for n := first; n <= last && int64(len(out)) < pq.limit; n++ {
		out = append(out, n)
	}
	return out
}

func periodBounds(n int64, length time.Duration) (time.Time, time.Time) {
	start := periodOrigin.Add(time.Duration(n) * length)
	return start, start.Add(length)
}

// apyRecord is one item of the network APY page.
type apyRecord struct {
	StakingPeriodNumber int64   `json:"stakingPeriodNumber"`
	StakingPeriodStart  string  `json:"stakingPeriodStart"`
	StakingPeriodEnd    string  `json:"stakingPeriodEnd"`
	NetworkAPY          float64 `json:"networkApy"`
	UpdatedAt           string  `json:"updatedAt"`
	ConsensusLayerAPY   float64 `json:"consensusLayerApy"`
	ExecutionLayerAPY   float64 `json:"executionLayerApy"`
}

// pageResult is the page shape of endpoints 1 and 2.
type pageResult[T any] struct {
	Limit    int64  `json:"limit"`
	Offset   int64  `json:"offset"`
	StartAt  string `json:"startAt"`
	FinishAt string `json:"finishAt"`
	List     []T    `json:"list"`
}

// SetRepeatPages makes endpoints 1 and 2 a hostile pager when on: they answer the first page of
// a query whatever its offset, while saying they answered the offset asked. A client that trusts
// the pages reads forever.
func (s *Sandbox) SetRepeatPages(on bool) { s.srv.repeatPages.Store(on) }

// page is the period numbers of pq's page: from its offset, or from 0 under SetRepeatPages.
func (s *server) page(pq periodQuery, length time.Duration) []int64 {
	if s.repeatPages.Load() {
		pq.offset = 0
	}
	return pq.periods(length)
}

// networkAPY answers endpoint 2.
func (s *server) networkAPY(r *http.Request, _ *reqContext) (any, *apiError) {
	network := r.PathValue("network")
	cfg, ok := apyNetworks[network]
	if !ok {
		return nil, networkNotInList(network)
	}
	var errs []fieldError
	pq := s.readPeriodQuery(r, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	list := []apyRecord{}
	now := s.now().UTC().Truncate(time.Hour)
	for _, n := range s.page(pq, cfg.period) {
		start, end := periodBounds(n, cfg.period)
		num := strconv.FormatInt(n, 10)
		apy := round(cfg.apy+unitFloat("apy", network, num)-0.5, 4)
		cl, el := apy, 0.0
		if network == "ethereum" {
			el = round(apy*(0.15+0.2*unitFloat("el", network, num)), 4)
			cl = round(apy-el, 4)
		}
		list = append(list, apyRecord{
			StakingPeriodNumber: n, StakingPeriodStart: formatTime(start), StakingPeriodEnd: formatTime(end),
			NetworkAPY: apy, UpdatedAt: formatTime(minTime(end, now)), ConsensusLayerAPY: cl, ExecutionLayerAPY: el,
		})
	}
	return pageResult[apyRecord]{Limit: pq.limit, Offset: pq.offset, StartAt: formatTime(pq.start), FinishAt: formatTime(pq.finish), List: list}, nil
}

// reward is one reward of a delegator reward record.
type reward struct {
	Validator string  `json:"validator,omitempty"`
	Type      string  `json:"type"`
	Amount    float64 `json:"amount"`
	NetAmount float64 `json:"netAmount"`
	Fee       float64 `json:"fee"`
	Currency  string  `json:"currency"`
	Recipient string  `json:"recipient"`
}

// delegatorRecord is one record of the delegator rewards page.
type delegatorRecord struct {
	StakingPeriod      string   `json:"stakingPeriod"`
	StakingPeriodStart string   `json:"stakingPeriodStart,omitempty"`
	StakingPeriodEnd   string   `json:"stakingPeriodEnd,omitempty"`
	Rewards            []reward `json:"rewards"`
	Validator          string   `json:"validator,omitempty"`
	NotFinalized       bool     `json:"notFinalized"`
}

// delegatorAPR answers endpoint 1.
func (s *server) delegatorAPR(r *http.Request, _ *reqContext) (any, *apiError) {
	network := r.PathValue("network")
	if !contains(aprNetworks, network) {
		return nil, networkNotInList(network)
	}
	var errs []fieldError
	address := r.URL.Query().Get("address")
	if address == "" {
		errs = append(errs, fieldErr("address", "isNotEmpty", "address should not be empty"))
	}
	pq := s.readPeriodQuery(r, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	if !isEVMAddress(address) {
		return nil, invalidDelegator("address", address, network)
	}
	address = strings.ToLower(address)
	length := apyNetworks[network].period
	now := s.now()
	list := []delegatorRecord{}
	for _, n := range s.page(pq, length) {
		start, end := periodBounds(n, length)
		num := strconv.FormatInt(n, 10)
		validator := "0x" + hexDigest(48, "validator", address)
		apy := apyNetworks[network].apy + unitFloat("apy", network, num) - 0.5
		daily := ethRewardStake * apy / 100 / 365
		el := 0.15 + 0.2*unitFloat("el", network, num)
		rewards := make([]reward, 0, 2)
		for _, part := range []struct {
			typ   string
			share float64
		}{{"consensus", 1 - el}, {"execution", el}} {
			gross := round(daily*part.share*(0.9+0.2*unitFloat("r", address, num, part.typ)), 9)
			fee := round(gross*ethValidatorFee, 9)
			rewards = append(rewards, reward{Validator: validator, Type: part.typ, Amount: gross,
				NetAmount: round(gross-fee, 9), Fee: fee, Currency: "ETH", Recipient: address})
		}
		list = append(list, delegatorRecord{
			StakingPeriod: num, StakingPeriodStart: formatTime(start), StakingPeriodEnd: formatTime(end),
			Rewards: rewards, Validator: validator, NotFinalized: end.After(now),
		})
	}
	return pageResult[delegatorRecord]{Limit: pq.limit, Offset: pq.offset, StartAt: formatTime(pq.start), FinishAt: formatTime(pq.finish), List: list}, nil
}

// isEVMAddress reports a 0x-prefixed 20-byte hex address.
func isEVMAddress(s string) bool {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != 40 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
