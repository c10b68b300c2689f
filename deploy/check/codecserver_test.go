package check

import (
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The codec server (cmd/codec-server) reads the payload keyset the worker seals with and a token
// file, both refused unless 0600 or stricter (package secretfile). So, like the Solana keys, both
// reach it, and the keyset reaches the worker and the starter, only as copy-keys' 0600 copies
// owned by user 65532. These tests hold that, its flags and its probes, as the worker's are held.

// Secrets of the payload codec (k8s/secret.template.yaml).
const (
	keysetSecret = "stakeflow-payload-keyset"
	tokensSecret = "stakeflow-codec-tokens"
)

// codecServerFlags reads the names of cmd/codec-server's flags from the source of
// codecserver.Config.Register.
func codecServerFlags(t *testing.T) map[string]bool {
	t.Helper()
	src := string(readFile(t, filepath.Join(repoRoot(t), "internal", "codecserver", "config.go")))
	body, err := registerBody(src, "Config")
	require.NoError(t, err, "internal/codecserver/config.go")
	require.Empty(t, nestedRegister.FindAllString(body, -1), "codecserver.Config.Register delegates: teach codecServerFlags where")
	names, err := flagsIn(body, "codecserver.Config.Register")
	require.NoError(t, err)
	flags := map[string]bool{}
	for _, n := range names {
		require.False(t, flags[n], "flag %q registered twice", n)
		flags[n] = true
	}
	return flags
}

func TestCodecServerFlagsReadFromSource(t *testing.T) {
	flags := codecServerFlags(t)
	for _, want := range []string{"config", "listen", "payload-keyset", "token-file", "ui-origin", "tls-cert", "tls-key", "stop-timeout", "log-format", "log-level"} {
		assert.True(t, flags[want], "flag %q not found in codecserver.Config.Register", want)
	}
}

// argFlags reads a container's args as --flag value pairs, failing on anything else or a flag
// the command does not register.
func argFlags(t *testing.T, args []string, flags map[string]bool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for i := 0; i < len(args); i += 2 {
		name, ok := strings.CutPrefix(args[i], "--")
		require.True(t, ok, "argument %q is not a --flag", args[i])
		name, value, inline := strings.Cut(name, "=")
		require.True(t, flags[name], "--%s is not a codec-server flag", name)
		if !inline {
			require.Less(t, i+1, len(args), "--%s has no value", name)
			value = args[i+1]
		} else {
			i--
		}
		out[name] = append(out[name], value)
	}
	return out
}

// copiedInto asserts that path, read by container c of spec, is in an in-memory emptyDir that c
// mounts read-only and exactly one init container writes: one running the worker's copy-keys
// script from a Secret volume (read-only, mounted in no regular container), as c's user, with
// that glob. It returns the Secret's name.
func copiedInto(t *testing.T, spec corev1.PodSpec, c corev1.Container, p, glob string) string {
	t.Helper()
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	m, ok := mountHolding(c.VolumeMounts, p)
	require.True(t, ok, "%s: %s is in no volume", c.Name, p)
	assert.True(t, m.ReadOnly, "%s mounts %s writable", c.Name, m.Name)
	ed := volumes[m.Name].EmptyDir
	require.NotNil(t, ed, "%s: %s is not in an emptyDir copy", c.Name, p)
	assert.Equal(t, corev1.StorageMediumMemory, ed.Medium, "%s: the copy must live in memory", m.Name)
	if assert.NotNil(t, ed.SizeLimit) {
		assert.LessOrEqual(t, ed.SizeLimit.Value(), int64(16<<20))
	}
	var writers []corev1.Container
	for _, ic := range spec.InitContainers {
		for _, im := range ic.VolumeMounts {
			if im.Name == m.Name && !im.ReadOnly {
				writers = append(writers, ic)
			}
		}
	}
	require.Len(t, writers, 1, "want exactly one init container writing %s", m.Name)
	ic := writers[0]
	script, args := copyKeysCommand(t, ic.Command)
	_, _, workerCopy, _ := deploymentCopyKeys(t)
	workerScript, _ := copyKeysCommand(t, workerCopy.Command)
	assert.Equal(t, workerScript, script, "%s runs another script than copy-keys", ic.Name)
	require.GreaterOrEqual(t, len(args), 2)
	if glob == "" {
		assert.Len(t, args, 2, "%s: SRC DST", ic.Name)
	} else {
		assert.Equal(t, []string{"", glob}, args[2:], "%s: SRC DST '' GLOB (no owner: the copy is its own user's)", ic.Name)
	}
	dst, ok := mountHolding(ic.VolumeMounts, args[1])
	require.True(t, ok)
	assert.Equal(t, m.Name, dst.Name)
	assert.Equal(t, path.Clean(args[1]), path.Clean(dst.MountPath))
	assert.Equal(t, path.Dir(p), path.Clean(m.MountPath), "%s must be directly in the copy", p)
	src, ok := mountHolding(ic.VolumeMounts, args[0])
	require.True(t, ok)
	assert.Equal(t, path.Clean(args[0]), path.Clean(src.MountPath))
	assert.True(t, src.ReadOnly)
	secret := volumes[src.Name].Secret
	require.NotNil(t, secret, "%s reads %s, not a Secret volume", ic.Name, args[0])
	for _, rc := range spec.Containers {
		for _, rm := range rc.VolumeMounts {
			if s := volumes[rm.Name].Secret; s != nil {
				assert.NotEqual(t, secret.SecretName, s.SecretName, "container %s mounts the Secret %s: group-readable under fsGroup, refused", rc.Name, s.SecretName)
			}
		}
	}
	wantUID, wantGID := effectiveUser(spec.SecurityContext, c)
	gotUID, gotGID := effectiveUser(spec.SecurityContext, ic)
	require.NotNil(t, wantUID)
	if assert.NotNil(t, gotUID) {
		assert.Equal(t, *wantUID, *gotUID, "%s runs as another user than %s", ic.Name, c.Name)
	}
	if wantGID != nil && assert.NotNil(t, gotGID) {
		assert.Equal(t, *wantGID, *gotGID)
	}
	// The file the reader opens is the one the glob copies: the Secret's key of that name.
	name := path.Base(p)
	if glob == "" {
		assert.True(t, strings.HasSuffix(name, ".json"), "%s: copy-keys without a glob copies *.json only", p)
	} else {
		assert.Equal(t, glob, name)
	}
	return secret.SecretName
}

func TestWorkerPayloadKeysetIsACopy(t *testing.T) {
	ms := loadManifests(t)
	d := workerDeployment(t, ms)
	cfg := deploymentWorkerConfig(t, ms)
	keyset, ok := cfg["payload-keyset"].(string)
	require.True(t, ok, "the worker's ConfigMap sets no payload-keyset: production runs with payloads encrypted")
	assert.Equal(t, keysetSecret, copiedInto(t, d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0], keyset, ""))
}

func TestCodecServerDeployment(t *testing.T) {
	ms := loadManifests(t)
	d := named[*appsv1.Deployment](t, ms, codecName)
	spec := d.Spec.Template.Spec
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	for _, ctr := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		t.Run(ctr.Name, func(t *testing.T) { assertHardenedContainer(t, ctr) })
	}
	sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels)
	assert.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)))
	require.NotNil(t, d.Spec.Replicas)
	assert.GreaterOrEqual(t, *d.Spec.Replicas, int32(2), "one replica makes the Web UI's decoding go away on every roll")
	if ru := d.Spec.Strategy.RollingUpdate; assert.NotNil(t, ru) && assert.NotNil(t, ru.MaxUnavailable) {
		assert.Equal(t, "0", ru.MaxUnavailable.String())
	}
	psc := spec.SecurityContext
	require.NotNil(t, psc)
	if assert.NotNil(t, psc.RunAsNonRoot) {
		assert.True(t, *psc.RunAsNonRoot)
	}
	if assert.NotNil(t, psc.SeccompProfile) {
		assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
	}
	sa := named[*corev1.ServiceAccount](t, ms, spec.ServiceAccountName)
	if assert.NotNil(t, sa.AutomountServiceAccountToken) {
		assert.False(t, *sa.AutomountServiceAccountToken)
	}
	if assert.NotNil(t, spec.AutomountServiceAccountToken) {
		assert.False(t, *spec.AutomountServiceAccountToken)
	}

	// Settings are flags of the command, each one it registers; nothing from the environment.
	require.Empty(t, c.Command, "the image's entrypoint is the codec server")
	assert.Empty(t, c.Env)
	assert.Empty(t, c.EnvFrom)
	args := argFlags(t, c.Args, codecServerFlags(t))
	for _, f := range []string{"listen", "payload-keyset", "token-file", "ui-origin"} {
		assert.NotEmpty(t, args[f], "--%s is not given", f)
	}
	for _, o := range args["ui-origin"] {
		assert.Regexp(t, `^https?://[^/]+$`, o, "--ui-origin %q is not an origin", o)
	}

	// The keyset is the worker's Secret, the tokens their own; each read as a 0600 copy.
	require.Len(t, args["payload-keyset"], 1)
	require.Len(t, args["token-file"], 1)
	assert.Equal(t, keysetSecret, copiedInto(t, spec, c, args["payload-keyset"][0], ""))
	assert.Equal(t, tokensSecret, copiedInto(t, spec, c, args["token-file"][0], "tokens"))

	// The probes knock where it listens: /healthz and /readyz on the named port of --listen.
	_, port, err := net.SplitHostPort(args["listen"][0])
	require.NoError(t, err)
	host, _, _ := net.SplitHostPort(args["listen"][0])
	assert.NotEqual(t, "127.0.0.1", host, "--listen on loopback is unreachable for the kubelet and the Service")
	require.Len(t, c.Ports, 1)
	assert.Equal(t, port, fmt.Sprint(c.Ports[0].ContainerPort))
	for _, probe := range []struct {
		name string
		p    *corev1.Probe
		path string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}, {"startup", c.StartupProbe, "/healthz"}} {
		if assert.NotNil(t, probe.p, "%s probe missing", probe.name) && assert.NotNil(t, probe.p.HTTPGet, "%s probe is not HTTP", probe.name) {
			assert.Equal(t, probe.path, probe.p.HTTPGet.Path, "%s probe path", probe.name)
			assert.Equal(t, c.Ports[0].Name, probe.p.HTTPGet.Port.String(), "%s probe port", probe.name)
		}
	}

	// The Service selects these pods and forwards to that port.
	svc := named[*corev1.Service](t, ms, codecName)
	require.NotEmpty(t, svc.Spec.Selector)
	assert.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)), "the Service selects no codec server pod")
	require.Len(t, svc.Spec.Ports, 1)
	assert.Equal(t, c.Ports[0].Name, svc.Spec.Ports[0].TargetPort.String())
	// And selects nothing of the worker.
	assert.False(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(workerDeployment(t, ms).Spec.Template.Labels)))
}

// TestCopyKeysGlob: with a fourth argument, copy-keys copies the files of that name only (the
// codec server's token file, which is not JSON).
func TestCopyKeysGlob(t *testing.T) {
	_, _, ic, _ := deploymentCopyKeys(t)
	script, _ := copyKeysCommand(t, ic.Command)
	src := secretVolumeDir(t, map[string]string{"tokens": "t1\nt2\n", "other": "x", "k.json": "[1]"})
	dst := t.TempDir()
	out, err := runCopyKeys(t, script, src, dst, "", "tokens")
	require.NoError(t, err, out)
	assertWorkerKeyFiles(t, dst, map[string]string{"tokens": "t1\nt2\n"}, os.Getuid(), -1)
	assert.NotContains(t, out, "t1")

	out, err = runCopyKeys(t, script, secretVolumeDir(t, map[string]string{"k.json": "[1]"}), t.TempDir(), "", "tokens")
	require.Error(t, err)
	assert.Contains(t, out, "no tokens key file in")
}

// composeCopy asserts that the file p a compose service reads is in a named volume it mounts
// read-only, written by exactly one one-shot service running the keys service's script with
// that glob from one secret, chowned to the image's user. It returns the secret's name.
func composeCopy(t *testing.T, p *types.Project, reader string, file, glob string) string {
	t.Helper()
	r := p.Services[reader]
	v, ok := serviceVolumeHolding(r, file)
	require.True(t, ok, "%s: %s is in no volume", reader, file)
	assert.Equal(t, types.VolumeTypeVolume, v.Type)
	assert.True(t, v.ReadOnly, "%s mounts %s writable", reader, v.Source)
	assert.Equal(t, path.Dir(file), path.Clean(v.Target))
	_, declared := p.Volumes[v.Source]
	assert.True(t, declared, "volume %s is not declared", v.Source)
	keysScript, _ := copyKeysCommand(t, p.Services["keys"].Entrypoint)
	var writers []string
	for name, s := range p.Services {
		for _, sv := range s.Volumes {
			if sv.Source == v.Source && !sv.ReadOnly {
				writers = append(writers, name)
			}
		}
	}
	require.Len(t, writers, 1, "want one service writing volume %s", v.Source)
	w := p.Services[writers[0]]
	assert.Equal(t, types.ServiceConditionCompletedSuccessfully, r.DependsOn[writers[0]].Condition, "%s starts before %s copied its file", reader, writers[0])
	script, args := copyKeysCommand(t, w.Entrypoint)
	assert.Equal(t, keysScript, script, "%s runs another script than keys", writers[0])
	want := 3
	if glob != "" {
		want = 4
		assert.Equal(t, glob, args[3])
		assert.Equal(t, glob, path.Base(file))
	} else {
		assert.True(t, strings.HasSuffix(file, ".json"))
	}
	require.Len(t, args, want)
	assert.Equal(t, workerImageUser(t), args[2], "%s hands the copy to another user than the images'", writers[0])
	assert.Empty(t, r.User, "%s's user is the image's, which owns the copy", reader)
	dv, ok := serviceVolumeHolding(w, args[1])
	require.True(t, ok)
	assert.Equal(t, v.Source, dv.Source)
	require.Len(t, w.Secrets, 1, "%s gets one secret", writers[0])
	target := secretTarget(w.Secrets[0])
	assert.Equal(t, path.Clean(args[0]), path.Dir(target))
	assert.Equal(t, path.Base(file), path.Base(target), "the copy's name is the secret's")
	assert.Equal(t, "none", w.NetworkMode)
	assert.True(t, w.ReadOnly)
	got := slices.Clone(w.CapAdd)
	slices.Sort(got)
	assert.Equal(t, []string{"CHOWN", "DAC_READ_SEARCH"}, got)
	return w.Secrets[0].Source
}

func TestComposeCodecServer(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	cs := p.Services["codec-server"]
	flags := codecServerFlags(t)
	env := map[string]string{}
	for k, v := range cs.Environment {
		flag, ok := strings.CutPrefix(k, "STAKEFLOW_")
		require.True(t, ok, "codec-server env %s is not a flag twin", k)
		flag = strings.ToLower(strings.ReplaceAll(flag, "_", "-"))
		require.True(t, flags[flag], "codec-server env %s names no flag", k)
		require.NotNil(t, v)
		env[flag] = *v
	}
	for _, f := range []string{"listen", "payload-keyset", "token-file", "ui-origin"} {
		assert.NotEmpty(t, env[f], "codec-server: STAKEFLOW_%s unset", strings.ToUpper(strings.ReplaceAll(f, "-", "_")))
	}
	assert.Equal(t, "payload_keyset", composeCopy(t, p, "codec-server", env["payload-keyset"], ""))
	assert.Equal(t, "codec_tokens", composeCopy(t, p, "codec-server", env["token-file"], "tokens"))

	// The worker and the setup starter seal with that same file, from the same volume.
	for _, svc := range []string{"worker", "setup"} {
		v := p.Services[svc].Environment["STAKEFLOW_PAYLOAD_KEYSET"]
		if assert.NotNil(t, v, "%s runs without a payload keyset", svc) {
			assert.Equal(t, env["payload-keyset"], *v, "%s's keyset is another file", svc)
			assert.Equal(t, "payload_keyset", composeCopy(t, p, svc, *v, ""))
		}
	}

	// Published on loopback where it listens; the health check asks there; the UI's origin is
	// the one the UI is published at.
	_, port, err := net.SplitHostPort(env["listen"])
	require.NoError(t, err)
	require.Len(t, cs.Ports, 1)
	assert.Equal(t, port, fmt.Sprint(cs.Ports[0].Target))
	assert.Equal(t, "127.0.0.1:"+port, cs.Ports[0].HostIP+":"+cs.Ports[0].Published)
	assert.Contains(t, strings.Join(cs.HealthCheck.Test, " "), "127.0.0.1:"+port+"/readyz")
	ui := p.Services["temporal-ui"]
	require.Len(t, ui.Ports, 1)
	assert.Equal(t, "http://127.0.0.1:"+ui.Ports[0].Published, env["ui-origin"], "the codec server allows another origin than the UI's")
	// local-secrets.sh points the UI at the published port.
	assert.Contains(t, string(readFile(t, deployPath(t, "local-secrets.sh"))), "TEMPORAL_CODEC_ENDPOINT=http://127.0.0.1:"+cs.Ports[0].Published+"/")
}

func TestDockerfileCodecServer(t *testing.T) {
	stages, args, _, err := parseDockerfile(readFile(t, deployPath(t, "Dockerfile")))
	require.NoError(t, err)
	i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == "codec-server" })
	require.GreaterOrEqual(t, i, 0, "no codec-server stage")
	s := stages[i]
	assert.Equal(t, "gcr.io/distroless/static-debian12:nonroot", expandArgs(s.BaseName, args), "the codec server is static: distroless/static")
	assert.True(t, nonRoot(stageUser(s)))
	var copied []string
	var entry *instructions.EntrypointCommand
	for _, c := range s.Commands {
		switch c := c.(type) {
		case *instructions.CopyCommand:
			assert.Equal(t, "build", c.From)
			copied = append(copied, c.SourcePaths...)
		case *instructions.EntrypointCommand:
			entry = c
		}
	}
	assert.Contains(t, copied, "/out/codec-server")
	assert.Contains(t, copied, "/out/healthprobe", "compose's health check runs the probe")
	if assert.NotNil(t, entry) {
		assert.False(t, entry.PrependShell)
		assert.Equal(t, []string{"/usr/local/bin/codec-server"}, []string(entry.CmdLine))
	}
	// Built static: CGO off on the line that builds it (distroless/static has no libc).
	for _, c := range stages[slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == "build" })].Commands {
		if r, ok := c.(*instructions.RunCommand); ok && strings.Contains(strings.Join(r.CmdLine, " "), "./cmd/codec-server") {
			assert.Contains(t, strings.Join(r.CmdLine, " "), "CGO_ENABLED=0")
		}
	}
}
