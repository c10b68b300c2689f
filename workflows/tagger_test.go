package workflows

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/codec"
)

// testSearchKey is the search key of the tagged runs; tagOf computes a tag under it with crypto/hmac
// alone, as docs/encryption.md describes tags.
var testSearchKey = bytes.Repeat([]byte{0x42}, codec.SearchKeySize)

func tagOf(v string) string {
	m := hmac.New(sha256.New, testSearchKey)
	m.Write([]byte(v))
	return "h:" + hex.EncodeToString(m.Sum(nil))[:32]
}

// withTagger runs the suite's workflow under the tagger of a keyset, with a search key or without.
func (s *CoreSuite) withTagger(searchKey []byte) {
	f := codec.KeysetFile{Current: "k1", Keys: []codec.Key{{ID: "k1", Key: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, codec.KeySize))}}}
	if searchKey != nil {
		f.SearchKey = base64.StdEncoding.EncodeToString(searchKey)
	}
	b, err := json.Marshal(f)
	s.Require().NoError(err)
	ks, err := codec.ParseKeyset(b)
	s.Require().NoError(err)
	s.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{
		TaggerInterceptor(ks.Tagger()).(interceptor.WorkerInterceptor)}})
}

// noClearValue fails when any attribute written holds one of the confidential values.
func (s *CoreSuite) noClearValue(values ...string) {
	for name, v := range s.sa {
		for _, clear := range values {
			s.NotContains(fmt.Sprint(v), clear, "%s holds %q in clear", name, clear)
		}
	}
}

// Under a tagger the staker, the account and every transaction ID are written as their tags, the
// amount not at all; what the operation is and where it stands stay clear.
func (s *CoreSuite) TestTaggedOperationWritesTagsNotValues() {
	s.withTagger(testSearchKey)
	s.run(coreInput{Amount: "1500", Steps: 2, SetAccount: "acct-9"})
	s.result()
	s.Equal(tagOf("alice"), s.sa[SAStaker.GetName()])
	s.Equal(tagOf("acct-9"), s.sa[SAStakeAccount.GetName()])
	s.Equal([]string{tagOf("tx-1"), tagOf("tx-2")}, s.sa[SASignatures.GetName()])
	_, amount := s.sa[SAAmount.GetName()]
	s.False(amount, "no amount under a tagger")
	s.Equal(fakeChainName, s.sa[SAChain.GetName()])
	s.Equal("devnet", s.sa[SANetwork.GetName()])
	s.Equal("bond", s.sa[SAOperation.GetName()])
	s.Equal(StepDone, s.sa[SAStep.GetName()])
	s.noClearValue("alice", "acct-9", "tx-1", "tx-2", "1500")
	// The status query (a payload, sealed by the codec) still tells everything.
	s.Equal("alice", s.status().Staker)
	s.Equal("1500", s.status().Amount)
}

// Started through the starter (the same tagger, attributes tagged at start), the operation does not
// write them again.
func (s *CoreSuite) TestTaggedAttributesSetAtStartAreNotResent() {
	s.withTagger(testSearchKey)
	s.Require().NoError(s.env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(
		SAChain.ValueSet(fakeChainName), SANetwork.ValueSet("devnet"), SAOperation.ValueSet("bond"),
		SAStaker.ValueSet(tagOf("alice")), SAStakeAccount.ValueSet(tagOf("acct-1")),
		SAStep.ValueSet(StepValidating))))
	s.run(coreInput{Amount: "1500", Account: "acct-1", Steps: 1})
	s.result()
	s.Equal([]string{StepConfirming, StepDone}, s.steps)
	for _, name := range []string{SAStaker.GetName(), SAStakeAccount.GetName(), SAChain.GetName(), SAAmount.GetName()} {
		_, resent := s.sa[name]
		s.False(resent, "%s set at start is not sent again", name)
	}
	s.Equal([]string{tagOf("tx-1")}, s.sa[SASignatures.GetName()])
}

// A keyset without a search key tags nothing: the confidential attributes are left out, never
// written clear.
func (s *CoreSuite) TestWithoutASearchKeyConfidentialAttributesAreLeftOut() {
	s.withTagger(nil)
	s.run(coreInput{Amount: "1500", Steps: 1, SetAccount: "acct-9"})
	s.result()
	for _, name := range []string{SAStaker.GetName(), SAStakeAccount.GetName(), SASignatures.GetName(), SAAmount.GetName()} {
		_, written := s.sa[name]
		s.False(written, "%s is left out", name)
	}
	s.Equal("bond", s.sa[SAOperation.GetName()])
	s.Equal(StepDone, s.sa[SAStep.GetName()])
}

// Started by a starter under another search key, the operation writes its own tag of the staker in
// its next upsert, not in one of its own at start: whether it upserts at start depends on what the
// start holds, never on the worker's search key, so it replays the same on a worker given another
// key (replaytest replays every history under another key too). The worker warns, naming the
// attribute and neither tag.
func (s *CoreSuite) TestATagUnderAnotherSearchKeyIsCorrectedInTheNextUpsert() {
	logs := &warnLog{}
	s.SetLogger(logs)
	defer s.SetLogger(nil)
	s.SetupTest()
	s.withTagger(testSearchKey)
	otherTag := "h:" + hex.EncodeToString(bytes.Repeat([]byte{0xab}, 16))
	s.Require().NoError(s.env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(
		SAChain.ValueSet(fakeChainName), SANetwork.ValueSet("devnet"), SAOperation.ValueSet("bond"),
		SAStaker.ValueSet(otherTag), SAStep.ValueSet(StepValidating))))
	s.run(coreInput{Amount: "1500", Steps: 1})
	s.result()
	s.Equal([]string{StepConfirming, StepDone}, s.steps)
	s.Equal(2, s.upserts, "no upsert at start: one where it rests (confirming), one at its end")
	s.Equal(tagOf("alice"), s.sa[SAStaker.GetName()])
	warned := logs.matching("A search attribute set at start differs from this worker's")
	s.Require().Len(warned, 1)
	s.Contains(warned[0], SAStaker.GetName())
	s.NotContains(warned[0], otherTag)
	s.NotContains(warned[0], tagOf("alice"))
}
