package check

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The worker refuses a Solana key file the group or others can read (signer/keyring.go, mode &
// 0o077 != 0). Neither deploy path can hand it the key file as the platform mounts it: with
// fsGroup, Kubernetes makes Secret files group-readable whatever defaultMode says
// (kubernetes/kubernetes#57923), and compose bind-mounts local-secrets.sh's 0600 file still owned
// by the host user, whom the worker (65532) is not. So both copy the keys, as regular files of
// mode 0600 owned by the worker's user, into a volume the worker mounts read-only, with one
// script: the Deployment's copy-keys init container and compose's keys service. These tests hold
// that shape, and run the script.

// keysSecret is the Secret holding the Solana keys (k8s/secret.template.yaml, deploy/README.md).
const keysSecret = "stakeflow-solana-keys"

// keyFilePermMask is the permission bits the worker refuses on a key file.
const keyFilePermMask os.FileMode = 0o077

// copyKeysCommand splits a copy-keys command line, `sh -c SCRIPT copy-keys SRC DST [OWNER]`,
// into the script and its arguments.
func copyKeysCommand(t *testing.T, cmd []string) (script string, args []string) {
	t.Helper()
	require.GreaterOrEqual(t, len(cmd), 6, "copy-keys command %q: want sh -c SCRIPT copy-keys SRC DST [OWNER]", cmd)
	require.Contains(t, []string{"/bin/sh", "sh"}, cmd[0], "copy-keys runs with sh")
	require.Equal(t, "-c", cmd[1])
	require.Equal(t, "copy-keys", cmd[3], "$0 of the script")
	return cmd[2], cmd[4:]
}

// runCopyKeys runs script as `sh -c script copy-keys args...` and returns its output.
func runCopyKeys(t *testing.T, script string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", script, "copy-keys"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// secretVolumeDir lays files out as the kubelet does in a Secret volume: each key a symbolic link
// through the hidden ..data link into a hidden timestamped directory, files mode 0440.
func secretVolumeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	ts := "..2026_01_02_03_04_05.000000001"
	require.NoError(t, os.Mkdir(filepath.Join(dir, ts), 0o755))
	require.NoError(t, os.Symlink(ts, filepath.Join(dir, "..data")))
	for name, content := range files {
		f := filepath.Join(dir, ts, name)
		require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
		require.NoError(t, os.Chmod(f, 0o440))
		require.NoError(t, os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)))
	}
	return dir
}

// assertWorkerKeyFiles asserts that dir holds exactly want (name to content), each a regular
// file of mode 0600 owned by uid (and gid, if not negative): files the worker's loader accepts
// and only the worker's user can read.
func assertWorkerKeyFiles(t *testing.T, dir string, want map[string]string, uid, gid int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names, wantNames []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for n := range want {
		wantNames = append(wantNames, n)
	}
	sort.Strings(wantNames)
	assert.Equal(t, wantNames, names, "the copy holds every key and nothing else")
	for name, content := range want {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if !assert.NoError(t, err) {
			continue
		}
		assert.True(t, fi.Mode().IsRegular(), "%s is not a regular file (%s)", name, fi.Mode())
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%s: the worker refuses a key file the group or others can read", name)
		assert.Zero(t, fi.Mode().Perm()&keyFilePermMask, "%s would be refused by the worker", name)
		st := fi.Sys().(*syscall.Stat_t)
		assert.EqualValues(t, uid, st.Uid, "%s: owner", name)
		if gid >= 0 {
			assert.EqualValues(t, gid, st.Gid, "%s: group", name)
		}
		assert.Equal(t, content, string(readFile(t, p)), "%s: content", name)
	}
}

// deploymentCopyKeys returns the Deployment, its worker container and the one init container
// that writes the volume holding the worker's keys, with that volume's name.
func deploymentCopyKeys(t *testing.T) (*appsv1.Deployment, corev1.Container, corev1.Container, string) {
	t.Helper()
	ms := loadManifests(t)
	d := workerDeployment(t, ms)
	spec := d.Spec.Template.Spec
	require.Len(t, spec.Containers, 1)
	worker := spec.Containers[0]
	cfg := deploymentWorkerConfig(t, ms)
	keys, ok := cfg["solana-keys"].([]any)
	require.True(t, ok && len(keys) > 0, "solana-keys must list key files or directories")
	vm, ok := mountHolding(worker.VolumeMounts, keys[0].(string))
	require.True(t, ok, "solana-keys %v is in no volume of the worker", keys[0])
	var writers []corev1.Container
	for _, ic := range spec.InitContainers {
		for _, m := range ic.VolumeMounts {
			if m.Name == vm.Name && !m.ReadOnly {
				writers = append(writers, ic)
			}
		}
	}
	require.Len(t, writers, 1, "want exactly one init container writing the worker's key volume %s", vm.Name)
	return d, worker, writers[0], vm.Name
}

// mountHolding returns the mount whose path is p or the deepest directory above p.
func mountHolding(mounts []corev1.VolumeMount, p string) (corev1.VolumeMount, bool) {
	var best corev1.VolumeMount
	found := false
	p = path.Clean(p)
	for _, m := range mounts {
		mp := path.Clean(m.MountPath)
		if (p == mp || strings.HasPrefix(p, mp+"/")) && (!found || len(mp) > len(best.MountPath)) {
			best, found = m, true
		}
	}
	return best, found
}

// effectiveUser is the user and group a container runs as: its own securityContext, else the
// pod's (nil if neither says).
func effectiveUser(pod *corev1.PodSecurityContext, c corev1.Container) (uid, gid *int64) {
	if pod != nil {
		uid, gid = pod.RunAsUser, pod.RunAsGroup
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	return uid, gid
}

// workerImageUser is the USER of the Dockerfile's worker stage: the user the worker runs as
// where nothing overrides it (compose).
func workerImageUser(t *testing.T) string {
	t.Helper()
	stages, _, _, err := parseDockerfile(readFile(t, deployPath(t, "Dockerfile")))
	require.NoError(t, err)
	i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == "worker" })
	require.GreaterOrEqual(t, i, 0, "no worker stage")
	return stageUser(stages[i])
}

func TestDeploymentKeysReachWorkerOnlyAsCopy(t *testing.T) {
	spec := workerDeployment(t, loadManifests(t)).Spec.Template.Spec
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}

	// The keys Secret is never mounted in a regular container: its files are group-readable
	// under fsGroup, and the worker would refuse them.
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if s := volumes[m.Name].Secret; s != nil {
				assert.NotEqual(t, keysSecret, s.SecretName,
					"container %s mounts the Secret %s (volume %s): with fsGroup its files are group-readable and the worker refuses them; keys reach the worker only as copy-keys' 0600 copy",
					c.Name, keysSecret, m.Name)
			}
		}
	}

	// Every key path the worker reads is in one volume that one init container, copy-keys,
	// writes: in memory, mounted read-only in the worker.
	_, worker, ic, keyVol := deploymentCopyKeys(t)
	cfg := deploymentWorkerConfig(t, loadManifests(t))
	for _, k := range cfg["solana-keys"].([]any) {
		m, ok := mountHolding(worker.VolumeMounts, k.(string))
		if !assert.True(t, ok, "solana-keys %v is in no volume of the worker", k) {
			continue
		}
		assert.Equal(t, keyVol, m.Name, "solana-keys %v is not in the copy-keys volume", k)
		assert.True(t, m.ReadOnly, "the worker mounts its key copy writable")
	}
	ed := volumes[keyVol].EmptyDir
	require.NotNil(t, ed, "the worker's keys (volume %s) are not an emptyDir copy", keyVol)
	assert.Equal(t, corev1.StorageMediumMemory, ed.Medium, "the key copy must live in memory, never on the node's disk")
	if assert.NotNil(t, ed.SizeLimit, "the key volume has no sizeLimit") {
		assert.LessOrEqual(t, ed.SizeLimit.Value(), int64(16<<20))
	}

	// copy-keys reads the keys Secret, read-only, and no other init container mounts it.
	script, args := copyKeysCommand(t, ic.Command)
	assert.Empty(t, ic.Args, "copy-keys takes its arguments in command")
	require.Len(t, args, 2, "copy-keys SRC DST: the copies are created by copy-keys' own user, no chown")
	src, ok := mountHolding(ic.VolumeMounts, args[0])
	require.True(t, ok, "copy-keys reads %s, which is in no volume", args[0])
	assert.Equal(t, path.Clean(args[0]), path.Clean(src.MountPath))
	if s := volumes[src.Name].Secret; assert.NotNil(t, s, "copy-keys reads %s, not a Secret volume", args[0]) {
		assert.Equal(t, keysSecret, s.SecretName)
	}
	assert.True(t, src.ReadOnly, "copy-keys mounts the Secret writable")
	dst, ok := mountHolding(ic.VolumeMounts, args[1])
	require.True(t, ok)
	assert.Equal(t, keyVol, dst.Name, "copy-keys writes %s, not the worker's key volume", args[1])
	assert.Equal(t, path.Clean(args[1]), path.Clean(dst.MountPath))
	for _, other := range spec.InitContainers {
		if other.Name == ic.Name {
			continue
		}
		for _, m := range other.VolumeMounts {
			if s := volumes[m.Name].Secret; s != nil {
				assert.NotEqual(t, keysSecret, s.SecretName, "init container %s mounts the keys Secret too", other.Name)
			}
		}
	}

	// The copies belong to the worker: copy-keys runs as the worker's user and group.
	wantUID, wantGID := effectiveUser(spec.SecurityContext, worker)
	gotUID, gotGID := effectiveUser(spec.SecurityContext, ic)
	require.NotNil(t, wantUID, "the worker's user is not set")
	if assert.NotNil(t, gotUID, "copy-keys has no runAsUser") {
		assert.Equal(t, *wantUID, *gotUID, "copy-keys runs as another user than the worker: the worker could not read its 0600 keys")
	}
	if wantGID != nil && assert.NotNil(t, gotGID) {
		assert.Equal(t, *wantGID, *gotGID, "copy-keys runs in another group than the worker")
	}

	// Kubernetes expands $(VAR) and $$ in command: the script must have neither, so that it
	// runs as written.
	assert.NotContains(t, script, "$(", "Kubernetes would expand $(...) in the copy-keys script")
	assert.NotContains(t, script, "$$", "Kubernetes would turn $$ into $ in the copy-keys script")

	// And it does what is claimed, on a Secret volume's layout.
	keys := map[string]string{"staker-1.json": "[1,2,3]", "staker-2.json": "[4,5,6]"}
	secretDir := secretVolumeDir(t, map[string]string{"staker-1.json": "[1,2,3]", "staker-2.json": "[4,5,6]", "README": "not a key"})
	dstDir := t.TempDir()
	out, err := runCopyKeys(t, script, secretDir, dstDir)
	require.NoError(t, err, out)
	assertWorkerKeyFiles(t, dstDir, keys, os.Getuid(), -1)
	assert.NotContains(t, out, "[1,2,3]", "copy-keys prints a key")
}

func TestCopyKeysScript(t *testing.T) {
	_, _, ic, _ := deploymentCopyKeys(t)
	script, _ := copyKeysCommand(t, ic.Command)

	t.Run("replaces an earlier copy", func(t *testing.T) {
		src := secretVolumeDir(t, map[string]string{"new.json": "[7]"})
		dst := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dst, "old.json"), []byte("[9]"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dst, "new.json"), []byte("[8]"), 0o644))
		out, err := runCopyKeys(t, script, src, dst)
		require.NoError(t, err, out)
		assertWorkerKeyFiles(t, dst, map[string]string{"new.json": "[7]"}, os.Getuid(), -1)
	})
	t.Run("no key is an error", func(t *testing.T) {
		src := secretVolumeDir(t, map[string]string{"README": "x"})
		out, err := runCopyKeys(t, script, src, t.TempDir())
		require.Error(t, err)
		assert.Contains(t, out, "no *.json key file in "+src)
	})
	t.Run("missing source is an error", func(t *testing.T) {
		_, err := runCopyKeys(t, script, filepath.Join(t.TempDir(), "absent"), t.TempDir())
		require.Error(t, err)
	})
	t.Run("owner", func(t *testing.T) {
		src := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(src, "k.json"), []byte("[1]"), 0o600))
		dst := t.TempDir()
		owner := fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
		out, err := runCopyKeys(t, script, src, dst, owner)
		require.NoError(t, err, out)
		assertWorkerKeyFiles(t, dst, map[string]string{"k.json": "[1]"}, os.Getuid(), os.Getgid())
	})
}

// serviceVolumeHolding returns the volume of s whose target is p or the deepest directory above p.
func serviceVolumeHolding(s types.ServiceConfig, p string) (types.ServiceVolumeConfig, bool) {
	var best types.ServiceVolumeConfig
	found := false
	p = path.Clean(p)
	for _, v := range s.Volumes {
		tg := path.Clean(v.Target)
		if (p == tg || strings.HasPrefix(p, tg+"/")) && (!found || len(tg) > len(best.Target)) {
			best, found = v, true
		}
	}
	return best, found
}

// secretTarget is where compose mounts a service's secret.
func secretTarget(s types.ServiceSecretConfig) string {
	switch {
	case s.Target == "":
		return "/run/secrets/" + s.Source
	case strings.HasPrefix(s.Target, "/"):
		return s.Target
	default:
		return "/run/secrets/" + s.Target
	}
}

func TestComposeKeysReachWorkerOnlyAsCopy(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	w, k := p.Services["worker"], p.Services["keys"]
	cfgFile := p.Configs[w.Configs[0].Source].File
	cfg, errs := workerConfigErrors(readFile(t, cfgFile), workerFlags(t))
	require.Empty(t, errs)

	// The worker does not get the key as a secret: a bind mount of local-secrets.sh's file,
	// 0600 and owned by the host user, which the worker's user cannot open.
	for _, s := range w.Secrets {
		assert.NotEqual(t, "solana_staker", s.Source,
			"the worker mounts the solana_staker secret: the host user's 0600 file, unreadable to the worker's user 65532; keys reach the worker only as the keys service's copy")
	}

	// Every key path the worker reads is in the named volume the keys service writes, read-only.
	keys, ok := cfg["solana-keys"].([]any)
	require.True(t, ok && len(keys) > 0)
	var keyVol string
	for _, kp := range keys {
		v, ok := serviceVolumeHolding(w, kp.(string))
		if !assert.True(t, ok, "solana-keys %v is in no volume of the worker", kp) {
			continue
		}
		assert.Equal(t, types.VolumeTypeVolume, v.Type, "solana-keys %v is not in a named volume", kp)
		assert.True(t, v.ReadOnly, "the worker mounts its key copy writable")
		keyVol = v.Source
	}
	require.NotEmpty(t, keyVol)
	vol, ok := p.Volumes[keyVol]
	require.True(t, ok, "volume %s is not declared", keyVol)
	assert.Empty(t, vol.DriverOpts, "volume %s: a tmpfs (or otherwise mounted) local volume is unmounted, and emptied, once the one-shot keys service exits, before the worker starts", keyVol)
	assert.False(t, bool(vol.External), "volume %s must be the project's own", keyVol)

	// The keys service reads the solana_staker secret and writes that volume.
	script, args := copyKeysCommand(t, k.Entrypoint)
	assert.Empty(t, k.Command)
	require.Len(t, args, 3, "copy-keys SRC DST OWNER")
	var srcs []string
	for _, s := range k.Secrets {
		assert.Equal(t, "solana_staker", s.Source, "the keys service gets no other secret")
		srcs = append(srcs, secretTarget(s))
	}
	require.Len(t, srcs, 1)
	assert.Equal(t, path.Clean(args[0]), path.Dir(srcs[0]), "copy-keys reads %s, where the secret is not", args[0])
	assert.True(t, strings.HasSuffix(srcs[0], ".json"), "the secret's file must end in .json for copy-keys and the worker's directory scan")
	v, ok := serviceVolumeHolding(k, args[1])
	require.True(t, ok, "copy-keys writes %s, which is in no volume", args[1])
	assert.Equal(t, keyVol, v.Source, "copy-keys writes %s, not the worker's key volume", args[1])
	assert.Equal(t, path.Clean(args[1]), path.Clean(v.Target))
	assert.False(t, v.ReadOnly)

	// The copies belong to the user the worker runs as: the image's USER, not overridden.
	assert.Empty(t, w.User, "the worker's user is the image's, which owns the key copy")
	assert.Equal(t, workerImageUser(t), args[2], "copy-keys hands the keys to another user than the worker image's")

	// The keys service: root only to read another user's 0600 file and hand the copy over,
	// with nothing else.
	assert.True(t, k.ReadOnly, "keys: root filesystem writable")
	assert.Equal(t, "none", k.NetworkMode, "keys needs no network")
	assert.Contains(t, k.CapDrop, "ALL")
	got := slices.Clone(k.CapAdd)
	sort.Strings(got)
	assert.Equal(t, []string{"CHOWN", "DAC_READ_SEARCH"}, got, "keys: capabilities beyond reading the secret and chown")
	assert.Contains(t, k.SecurityOpt, "no-new-privileges:true")
	assert.Empty(t, k.Ports)
	assert.Equal(t, types.ServiceConditionCompletedSuccessfully, w.DependsOn["keys"].Condition, "the worker starts before its keys are copied")

	// One script for both paths: compose's, once interpolated ($$ to $), is the Deployment's.
	_, _, ic, _ := deploymentCopyKeys(t)
	k8sScript, _ := copyKeysCommand(t, ic.Command)
	assert.Equal(t, k8sScript, script, "compose's keys script differs from the Deployment's copy-keys")

	// Run it as compose does, on a file like local-secrets.sh's (0600, the host user's). As root
	// it chowns to the worker's user, as in the container; otherwise to the test's own user.
	srcDir := t.TempDir()
	name := path.Base(srcs[0])
	require.NoError(t, os.WriteFile(filepath.Join(srcDir, name), []byte("[1,2,3]"), 0o600))
	dst := t.TempDir()
	owner, uid, gid := args[2], 65532, 65532
	require.Equal(t, "65532:65532", owner, "update the uid and gid this test expects")
	if os.Getuid() != 0 {
		owner, uid, gid = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), os.Getuid(), os.Getgid()
	}
	out, err := runCopyKeys(t, script, srcDir, dst, owner)
	require.NoError(t, err, out)
	assertWorkerKeyFiles(t, dst, map[string]string{name: "[1,2,3]"}, uid, gid)
}
