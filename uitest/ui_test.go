//go:build integration

package uitest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
	"github.com/stakeflow/stakeflow/harness/stack"
	"github.com/stakeflow/stakeflow/internal/starter"
	"github.com/stakeflow/stakeflow/modules/all"
	"github.com/stakeflow/stakeflow/workflows"
)

// requireProgram reads a program's path from env and fails the test when it is not there.
func requireProgram(t *testing.T, env, install string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set; run with %s=$(%s)", env, env, install)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", env, p, err)
	}
	return p
}

// artifactDir is .artifacts/ui at the repository root (the directory holding go.mod).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "go.mod not found above the test's directory")
		dir = parent
	}
	out := filepath.Join(dir, ".artifacts", "ui")
	require.NoError(t, os.MkdirAll(out, 0o755))
	return out
}

// browser runs headless Chromium on one page at a time, each run with a fresh profile.
type browser struct{ bin string }

func (b *browser) run(t *testing.T, extra []string, pageURL string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=8000", "--window-size=1400,1000",
	}, extra...)
	cmd := exec.CommandContext(ctx, b.bin, append(args, pageURL)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chromium on %s: %w\n%s", pageURL, err, lastLines(stderr.String(), 10))
	}
	return stdout.String(), nil
}

// text is the page's visible text after its scripts ran: the dumped DOM without scripts,
// styles and tags, with entities decoded and white space collapsed.
func (b *browser) text(t *testing.T, pageURL string) (string, error) {
	dom, err := b.run(t, []string{"--dump-dom"}, pageURL)
	if err != nil {
		return "", err
	}
	return domText(dom), nil
}

// screenshot saves the page as a picture. The page's content was checked before; a headless
// Chromium that hangs on a loaded machine (killed at its deadline) is run again rather than
// failing the check it illustrates.
func (b *browser) screenshot(t *testing.T, pageURL, file string) {
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := b.run(t, []string{"--screenshot=" + file}, pageURL)
		if !assert.NoError(c, err) {
			return
		}
		info, err := os.Stat(file)
		if !assert.NoError(c, err) {
			return
		}
		assert.Greater(c, info.Size(), int64(10_000), "screenshot %s is suspiciously small", file)
	}, 5*time.Minute, time.Second)
	t.Logf("screenshot: %s", file)
}

var (
	scriptOrStyle = regexp.MustCompile(`(?s)<(script|style)\b.*?</(script|style)>`)
	tag           = regexp.MustCompile(`(?s)<[^>]*>`)
	space         = regexp.MustCompile(`\s+`)
)

func domText(dom string) string {
	s := scriptOrStyle.ReplaceAllString(dom, " ")
	s = tag.ReplaceAllString(s, " ")
	s = html.UnescapeString(s)
	s = space.ReplaceAllString(s, " ")
	// The UI's JSON viewer puts keys and values in separate elements; closing the gap the
	// stripping left before each colon keeps members whole ("key": value).
	return strings.ReplaceAll(s, `" :`, `":`)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func listURL(ui, query string) string {
	return ui + "/namespaces/default/workflows?query=" + url.QueryEscape(query)
}

// TestWebUIListsStakeWithSearchAttributes stakes through the admin tool, then checks in headless
// Chromium that the Web UI lists the workflow under a query on its search attributes, leaves it
// out under a query on another step, and shows its search attributes on the workflow's page.
func TestWebUIListsStakeWithSearchAttributes(t *testing.T) {
	chromium := requireProgram(t, "CHROMIUM", "scripts/tools.sh chromium")
	temporalCLI := requireProgram(t, "TEMPORAL_CLI", "scripts/tools.sh temporal")
	artifacts := artifactDir(t)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := stack.Start(ctx, stack.Options{
		TemporalCLI:    temporalCLI,
		Dir:            t.TempDir(),
		UIPort:         stack.AnyPort,
		Runtime:        solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 64},
		Stakers:        1,
		StakerLamports: 10_000_000_000,
	})
	require.NoError(t, err)
	defer st.Close()
	require.NotEmpty(t, st.UIURL)

	staker := st.Stakers[0].String()
	id := fmt.Sprintf("ui-stake-%d", time.Now().UnixNano())
	var out bytes.Buffer
	err = starter.Run(ctx, []string{"stake", "--network", "testnet", "--staker", staker, "--sol", "2",
		"--id", id, "--wait", "--temporal-address", st.TemporalAddress()}, &out, nil)
	require.NoError(t, err, out.String())
	t.Logf("starter output:\n%s", out.String())
	desc, err := st.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	runID := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()

	match := fmt.Sprintf(`%s="stake" AND %s="%s"`, workflows.SAOperation.GetName(), workflows.SAStep.GetName(), workflows.StepDone)
	// The UI reads the same visibility store; wait until the server lists the workflow there.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := st.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: match})
		if !assert.NoError(c, err) {
			return
		}
		var ids []string
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		assert.Contains(c, ids, id)
	}, time.Minute, 200*time.Millisecond)

	b := &browser{bin: chromium}

	t.Run("list filtered on the search attributes shows the workflow", func(t *testing.T) {
		page := listURL(st.UIURL, match)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			text, err := b.text(t, page)
			if !assert.NoError(c, err) {
				return
			}
			assert.Contains(c, text, id, "workflow ID")
			assert.Contains(c, text, "StakeWorkflow", "workflow type")
			assert.Contains(c, text, "Completed", "execution status")
		}, 2*time.Minute, time.Second)
		b.screenshot(t, page, filepath.Join(artifacts, "workflow-list.png"))
	})

	t.Run("list filtered on another step leaves the workflow out", func(t *testing.T) {
		other := fmt.Sprintf(`%s="stake" AND %s="%s"`, workflows.SAOperation.GetName(), workflows.SAStep.GetName(), workflows.StepFailed)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			text, err := b.text(t, listURL(st.UIURL, other))
			if !assert.NoError(c, err) {
				return
			}
			// "No Results" shows the list was rendered, so the ID's absence means something.
			assert.Contains(c, text, "No Results")
			assert.NotContains(c, text, id)
		}, 2*time.Minute, time.Second)
	})

	t.Run("workflow page shows its search attributes", func(t *testing.T) {
		page := fmt.Sprintf("%s/namespaces/default/workflows/%s/%s/search-attributes", st.UIURL, url.PathEscape(id), url.PathEscape(runID))
		want := []string{
			fmt.Sprintf(`"%s": "stake"`, workflows.SAOperation.GetName()),
			fmt.Sprintf(`"%s": "%s"`, workflows.SAStep.GetName(), workflows.StepDone),
			fmt.Sprintf(`"%s": "%s"`, workflows.SAStaker.GetName(), staker),
			fmt.Sprintf(`"%s": "solana"`, workflows.SAChain.GetName()),
			fmt.Sprintf(`"%s": "testnet"`, workflows.SANetwork.GetName()),
			fmt.Sprintf(`"%s": 2000000000`, workflows.SAAmount.GetName()),
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			text, err := b.text(t, page)
			if !assert.NoError(c, err) {
				return
			}
			assert.Contains(c, text, id)
			for _, w := range want {
				assert.Contains(c, text, w)
			}
		}, 2*time.Minute, time.Second)
		b.screenshot(t, page, filepath.Join(artifacts, "workflow-search-attributes.png"))
	})
}

// TestWebUISchedulesPageListsTheDataJobs creates the three data jobs' schedules through the admin
// tool and checks in headless Chromium that the Web UI's Schedules page lists them (docs/operating.md's
// picture of it is this test's screenshot).
func TestWebUISchedulesPageListsTheDataJobs(t *testing.T) {
	chromium := requireProgram(t, "CHROMIUM", "scripts/tools.sh chromium")
	temporalCLI := requireProgram(t, "TEMPORAL_CLI", "scripts/tools.sh temporal")
	artifacts := artifactDir(t)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := stack.Start(ctx, stack.Options{
		TemporalCLI: temporalCLI, Dir: t.TempDir(), UIPort: stack.AnyPort,
		Runtime: solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 64},
		Stakers: 1, StakerLamports: 10_000_000_000,
	})
	require.NoError(t, err)
	defer st.Close()

	ids := []string{"job-apy-ethereum", "job-rewards-ethereum-0x00000000219ab540356cbb839cbe05303d7705fa", "job-ssv"}
	for _, args := range [][]string{
		{"--job", "apy", "--network", "ethereum", "--every", "1h"},
		{"--job", "rewards", "--network", "ethereum", "--address", "0x00000000219ab540356cbb839cbe05303d7705fa", "--every", "6h"},
		{"--job", "ssv", "--every", "5m"},
	} {
		var out bytes.Buffer
		err := starter.Run(ctx, append(append([]string{"schedule", "create"}, args...), "--temporal-address", st.TemporalAddress()), &out, nil, all.StarterGroups()...)
		require.NoError(t, err, out.String())
	}

	b := &browser{bin: chromium}
	page := st.UIURL + "/namespaces/default/schedules"
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		text, err := b.text(t, page)
		if !assert.NoError(c, err) {
			return
		}
		for _, id := range ids {
			assert.Contains(c, text, id)
		}
	}, 2*time.Minute, time.Second)
	b.screenshot(t, page, filepath.Join(artifacts, "schedules.png"))
}

// TestWebUIDecodesPayloadsThroughTheCodecServer stakes through a stack that encrypts every
// payload and runs a codec server beside its Web UI (harness/stack Options.CodecServer), then
// checks in headless Chromium that the workflow's page shows the stake's input decoded (staker,
// amount, the summary naming them) and its status, and that the Temporal CLI reads the history
// through the same codec server. The same page served by a Web UI without a codec endpoint (the
// same database reopened by a stack without a codec server) shows the status and the input only as
// ciphertext under the stack's key. Both screenshots are kept.
func TestWebUIDecodesPayloadsThroughTheCodecServer(t *testing.T) {
	chromium := requireProgram(t, "CHROMIUM", "scripts/tools.sh chromium")
	temporalCLI := requireProgram(t, "TEMPORAL_CLI", "scripts/tools.sh temporal")
	artifacts := artifactDir(t)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	keyset, keyID := filepath.Join(dir, "payload-keyset.json"), "ui-test"
	require.NoError(t, stack.WriteNewKeyset(keyset, keyID))
	opts := stack.Options{
		TemporalCLI:    temporalCLI,
		Dir:            dir,
		Persist:        true,
		UIPort:         stack.AnyPort,
		Runtime:        solanart.Options{SlotDuration: 100 * time.Millisecond, SlotsPerEpoch: 64},
		Stakers:        1,
		StakerLamports: 10_000_000_000,
		PayloadKeyset:  keyset,
		CodecServer:    true,
	}
	st, err := stack.Start(ctx, opts)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	require.NotEmpty(t, st.CodecURL)

	staker := st.Stakers[0].String()
	id := fmt.Sprintf("ui-codec-stake-%d", time.Now().UnixNano())
	var out bytes.Buffer
	err = starter.Run(ctx, []string{"stake", "--network", "testnet", "--staker", staker, "--sol", "2",
		"--id", id, "--wait", "--temporal-address", st.TemporalAddress(), "--payload-keyset", keyset}, &out, nil)
	require.NoError(t, err, out.String())
	desc, err := st.Client.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	runID := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	path := fmt.Sprintf("/namespaces/default/workflows/%s/%s/history", url.PathEscape(id), url.PathEscape(runID))

	b := &browser{bin: chromium}
	t.Run("with the codec server the page shows the input decoded and the status", func(t *testing.T) {
		page := st.UIURL + path
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			text, err := b.text(t, page)
			if !assert.NoError(c, err) {
				return
			}
			assert.Contains(c, text, id)
			assert.Contains(c, text, "Completed", "execution status")
			assert.Contains(c, text, fmt.Sprintf(`"staker": "%s"`, staker), "decoded input")
			assert.Contains(c, text, `"lamports": 2000000000`, "decoded input")
			assert.Contains(c, text, "stake 2 SOL from "+staker, "decoded summary")
		}, 2*time.Minute, time.Second)
		b.screenshot(t, page, filepath.Join(artifacts, "workflow-decoded.png"))
	})

	t.Run("the Temporal CLI reads the history through the codec server", func(t *testing.T) {
		// input is the workflow's input as `temporal workflow show` prints it: its encoding and data.
		input := func(extra ...string) (encoding, data string) {
			args := append([]string{"workflow", "show", "--workflow-id", id, "--address", st.TemporalAddress(), "--output", "json"}, extra...)
			raw, err := exec.CommandContext(ctx, temporalCLI, args...).Output()
			require.NoError(t, err, "%s", raw)
			var history struct {
				Events []struct {
					Started *struct {
						Input struct {
							Payloads []struct {
								Metadata map[string][]byte `json:"metadata"`
								Data     []byte            `json:"data"`
							} `json:"payloads"`
						} `json:"input"`
					} `json:"workflowExecutionStartedEventAttributes"`
				} `json:"events"`
			}
			require.NoError(t, json.Unmarshal(raw, &history))
			require.NotEmpty(t, history.Events)
			started := history.Events[0].Started
			require.NotNil(t, started, "the first event starts the workflow")
			require.Len(t, started.Input.Payloads, 1)
			p := started.Input.Payloads[0]
			return string(p.Metadata["encoding"]), string(p.Data)
		}
		token, err := os.ReadFile(st.CodecTokenFile)
		require.NoError(t, err)
		encoding, data := input("--codec-endpoint", st.CodecURL, "--codec-auth", "Bearer "+strings.TrimSpace(string(token)))
		assert.Equal(t, "json/plain", encoding)
		assert.Contains(t, data, fmt.Sprintf(`"staker":"%s"`, staker))
		encoding, data = input()
		assert.Equal(t, codec.Encoding, encoding, "without the codec server the CLI shows the input as the server holds it")
		assert.NotContains(t, data, staker)
	})

	st.Close()
	closed = true
	noCodec := opts
	noCodec.CodecServer, noCodec.NoWorker, noCodec.Stakers = false, true, 0
	st2, err := stack.Start(ctx, noCodec)
	require.NoError(t, err)
	defer st2.Close()

	t.Run("without the codec server the same page shows ciphertext only", func(t *testing.T) {
		page := st2.UIURL + path
		// The UI shows a payload it cannot decode as it is: metadata and data base64-encoded.
		encoding := fmt.Sprintf(`"encoding": "%s"`, base64.StdEncoding.EncodeToString([]byte(codec.Encoding)))
		key := fmt.Sprintf(`"%s": "%s"`, codec.MetadataKeyID, base64.StdEncoding.EncodeToString([]byte(keyID)))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			text, err := b.text(t, page)
			if !assert.NoError(c, err) {
				return
			}
			assert.Contains(c, text, id)
			assert.Contains(c, text, "Completed", "execution status")
			assert.Contains(c, text, encoding, "the input as the server holds it")
			assert.Contains(c, text, key, "the input as the server holds it")
			assert.NotContains(c, text, staker)
			assert.NotContains(c, text, "lamports")
		}, 2*time.Minute, time.Second)
		b.screenshot(t, page, filepath.Join(artifacts, "workflow-encrypted.png"))
	})
}
