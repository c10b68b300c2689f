package check

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kustomize "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// manifestScheme knows the API types the manifests may use; anything else is refused.
func manifestScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, corev1.AddToScheme, policyv1.AddToScheme} {
		require.NoError(t, add(s))
	}
	return s
}

// manifest is one decoded document of a file in deploy/k8s.
type manifest struct {
	file string
	obj  runtime.Object
}

// docSeparator splits a multi-document YAML file.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// splitDocs returns the non-empty YAML documents of raw.
func splitDocs(raw []byte) [][]byte {
	var docs [][]byte
	for _, d := range docSeparator.Split(string(raw), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// decodeStrict decodes one manifest into its registered API type, refusing unknown and duplicated
// fields and unregistered kinds.
func decodeStrict(s *runtime.Scheme, doc []byte) (runtime.Object, error) {
	dec := serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
	obj, _, err := dec.Decode(doc, nil, nil)
	return obj, err
}

// loadManifests decodes every document of every *.yaml file in deploy/k8s except the
// kustomization.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob(deployPath(t, "k8s", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	s := manifestScheme(t)
	var out []manifest
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		for i, doc := range splitDocs(readFile(t, f)) {
			obj, err := decodeStrict(s, doc)
			require.NoError(t, err, "%s document %d", filepath.Base(f), i+1)
			out = append(out, manifest{file: filepath.Base(f), obj: obj})
		}
	}
	return out
}

// only returns the single object of type T among ms.
// named returns the single object of type T among ms named name.
func named[T interface {
	runtime.Object
	GetName() string
}](t *testing.T, ms []manifest, name string) T {
	t.Helper()
	var found []T
	for _, m := range ms {
		if o, ok := m.obj.(T); ok && o.GetName() == name {
			found = append(found, o)
		}
	}
	var zero T
	require.Len(t, found, 1, "want exactly one %T named %s", zero, name)
	return found[0]
}

// Names of the Deployments in deploy/k8s.
const (
	workerName = "stakeflow-worker"
	codecName  = "stakeflow-codec-server"
)

// workerDeployment is the worker's Deployment among ms.
func workerDeployment(t *testing.T, ms []manifest) *appsv1.Deployment {
	t.Helper()
	return named[*appsv1.Deployment](t, ms, workerName)
}

func only[T runtime.Object](t *testing.T, ms []manifest) T {
	t.Helper()
	var found []T
	for _, m := range ms {
		if o, ok := m.obj.(T); ok {
			found = append(found, o)
		}
	}
	var zero T
	require.Len(t, found, 1, "want exactly one %T", zero)
	return found[0]
}

func TestDecodeStrictRefuses(t *testing.T) {
	s := manifestScheme(t)
	tests := []struct {
		name, doc, want string
	}{
		{name: "unknown field", doc: "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\nautomountToken: false\n", want: `unknown field "automountToken"`},
		{name: "misplaced field", doc: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  replica: 2\n", want: `unknown field "spec.replica"`},
		{name: "duplicate field", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nmetadata: {name: b}\n", want: `"metadata" already set`},
		{name: "retired API version", doc: "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: a}\n", want: "no kind"},
		{name: "unregistered kind", doc: "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a}\n", want: "no kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeStrict(s, []byte(tt.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestManifestsDecodeStrictly(t *testing.T) {
	ms := loadManifests(t)
	kinds := map[string]int{}
	for _, m := range ms {
		kinds[fmt.Sprintf("%T", m.obj)]++
	}
	assert.Equal(t, map[string]int{
		"*v1.Deployment": 2, "*v1.PodDisruptionBudget": 1, "*v1.ServiceAccount": 2, "*v1.ConfigMap": 1, "*v1.Secret": 4, "*v1.Service": 1,
	}, kinds)
}

func TestDeployment(t *testing.T) {
	ms := loadManifests(t)
	d := workerDeployment(t, ms)
	spec := d.Spec.Template.Spec

	require.NotNil(t, d.Spec.Replicas)
	assert.EqualValues(t, 2, *d.Spec.Replicas)
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	require.NoError(t, err)
	assert.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)), "the Deployment's selector does not match its pods")

	// Identity: the ServiceAccount of this directory, without an API token.
	sa := named[*corev1.ServiceAccount](t, ms, spec.ServiceAccountName)
	assert.Equal(t, sa.Name, spec.ServiceAccountName)
	if assert.NotNil(t, sa.AutomountServiceAccountToken) {
		assert.False(t, *sa.AutomountServiceAccountToken)
	}
	if assert.NotNil(t, spec.AutomountServiceAccountToken) {
		assert.False(t, *spec.AutomountServiceAccountToken)
	}

	// Pod security.
	psc := spec.SecurityContext
	require.NotNil(t, psc)
	if assert.NotNil(t, psc.RunAsNonRoot) {
		assert.True(t, *psc.RunAsNonRoot)
	}
	if assert.NotNil(t, psc.RunAsUser) {
		assert.NotZero(t, *psc.RunAsUser)
	}
	if assert.NotNil(t, psc.SeccompProfile) {
		assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
	}

	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	// Every container, init containers included, is hardened alike and has a pinned image.
	for _, ctr := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		t.Run(ctr.Name, func(t *testing.T) { assertHardenedContainer(t, ctr) })
	}
	for _, probe := range []struct {
		name string
		p    *corev1.Probe
		path string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}, {"startup", c.StartupProbe, "/healthz"}} {
		if assert.NotNil(t, probe.p, "%s probe missing", probe.name) && assert.NotNil(t, probe.p.HTTPGet, "%s probe is not HTTP", probe.name) {
			assert.Equal(t, probe.path, probe.p.HTTPGet.Path, "%s probe path", probe.name)
			assert.Equal(t, "health", probe.p.HTTPGet.Port.String(), "%s probe port", probe.name)
		}
	}
	require.Len(t, c.Ports, 1)
	assert.Equal(t, "health", c.Ports[0].Name)

	// Nothing comes from the environment: settings are the ConfigMap file, secrets are files.
	assert.Empty(t, c.Env, "the worker takes no environment variables")
	assert.Empty(t, c.EnvFrom, "the worker takes no environment variables")

	// Stop: Kubernetes waits longer than the worker's stop-timeout before SIGKILL.
	require.NotNil(t, spec.TerminationGracePeriodSeconds)
	assert.Greater(t, *spec.TerminationGracePeriodSeconds, int64(30))
	// Rolling updates never take a worker away before its replacement is ready.
	if ru := d.Spec.Strategy.RollingUpdate; assert.NotNil(t, ru) && assert.NotNil(t, ru.MaxUnavailable) {
		assert.Equal(t, "0", ru.MaxUnavailable.String())
	}
}

// assertHardenedContainer asserts a container's securityContext (non-root, read-only root
// filesystem, no privilege escalation, every capability dropped), its resource requests and
// limits, and that its image is pinned.
func assertHardenedContainer(t *testing.T, c corev1.Container) {
	t.Helper()
	assert.True(t, pinnedImage(c.Image), "image %q is not pinned by tag or digest", c.Image)
	csc := c.SecurityContext
	require.NotNil(t, csc)
	for name, b := range map[string]*bool{"readOnlyRootFilesystem": csc.ReadOnlyRootFilesystem, "runAsNonRoot": csc.RunAsNonRoot} {
		if assert.NotNil(t, b, "%s unset", name) {
			assert.True(t, *b, name)
		}
	}
	for name, b := range map[string]*bool{"allowPrivilegeEscalation": csc.AllowPrivilegeEscalation, "privileged": csc.Privileged} {
		if assert.NotNil(t, b, "%s unset", name) {
			assert.False(t, *b, name)
		}
	}
	if assert.NotNil(t, csc.RunAsUser, "runAsUser unset") {
		assert.NotZero(t, *csc.RunAsUser)
	}
	if assert.NotNil(t, csc.Capabilities) {
		assert.Equal(t, []corev1.Capability{"ALL"}, csc.Capabilities.Drop)
		assert.Empty(t, csc.Capabilities.Add)
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, ok := c.Resources.Requests[res]
		assert.True(t, ok && !req.IsZero(), "no %s request", res)
		lim, ok := c.Resources.Limits[res]
		assert.True(t, ok && !lim.IsZero(), "no %s limit", res)
		if ok {
			assert.LessOrEqual(t, req.Cmp(lim), 0, "%s request above limit", res)
		}
	}
}

// pinnedImage reports whether an image reference names a digest, or a tag other than latest.
func pinnedImage(ref string) bool {
	if strings.Contains(ref, "@sha256:") {
		return true
	}
	_, tag, ok := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
	return ok && tag != "" && tag != "latest"
}

func TestPinnedImage(t *testing.T) {
	for ref, want := range map[string]bool{
		"busybox:1.36.1": true, "ghcr.io/a/b:0.1.0": true, "busybox@sha256:0123": true, "localhost:5000/a:1": true,
		"busybox": false, "busybox:latest": false, "localhost:5000/a": false, "ghcr.io/a/b": false,
	} {
		assert.Equal(t, want, pinnedImage(ref), ref)
	}
}

// deploymentWorkerConfig returns the worker's settings: worker.json of the ConfigMap.
func deploymentWorkerConfig(t *testing.T, ms []manifest) map[string]any {
	t.Helper()
	cm := only[*corev1.ConfigMap](t, ms)
	raw, ok := cm.Data["worker.json"]
	require.True(t, ok, "ConfigMap %s has no worker.json", cm.Name)
	cfg, errs := workerConfigErrors([]byte(raw), workerFlags(t))
	require.Empty(t, errs, "ConfigMap worker.json")
	return cfg
}

func TestDeploymentMounts(t *testing.T) {
	ms := loadManifests(t)
	d := workerDeployment(t, ms)
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]

	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	secretNames := map[string]bool{}
	for _, m := range ms {
		if s, ok := m.obj.(*corev1.Secret); ok {
			secretNames[s.Name] = true
		}
	}
	// mountOf returns the volume mounted at the directory holding path.
	type mount struct {
		corev1.VolumeMount
		vol corev1.Volume
	}
	var mounts []mount
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		require.True(t, ok, "volume %s is mounted but not defined", vm.Name)
		require.Empty(t, vm.SubPath, "volume %s: subPath mounts do not see updates", vm.Name)
		mounts = append(mounts, mount{vm, v})
	}
	// mountOf finds the volume holding path: a file directly in a mount, or the mount itself.
	mountOf := func(path string) (mount, bool) {
		for _, m := range mounts {
			if mp := filepath.Clean(m.MountPath); filepath.Dir(path) == mp || filepath.Clean(path) == mp {
				return m, true
			}
		}
		return mount{}, false
	}

	// Secrets, in any container: read-only, not world-readable, each a Secret templated here.
	for _, ctr := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		for _, vm := range ctr.VolumeMounts {
			v, ok := volumes[vm.Name]
			require.True(t, ok, "container %s: volume %s is mounted but not defined", ctr.Name, vm.Name)
			if v.Secret == nil {
				continue
			}
			assert.True(t, vm.ReadOnly, "container %s: secret volume %s is mounted writable", ctr.Name, vm.Name)
			assert.True(t, secretNames[v.Secret.SecretName], "secret %s has no template here", v.Secret.SecretName)
			if assert.NotNil(t, v.Secret.DefaultMode, "secret volume %s: no defaultMode", vm.Name) {
				assert.Zero(t, *v.Secret.DefaultMode&0o007, "secret volume %s is world-readable (%#o)", vm.Name, *v.Secret.DefaultMode)
			}
		}
	}

	// --config names worker.json of the ConfigMap, mounted read-only.
	cm := only[*corev1.ConfigMap](t, ms)
	require.Equal(t, []string{"--config", "/etc/stakeflow/worker.json"}, c.Args)
	require.Empty(t, c.Command, "the image's entrypoint is the worker")
	cfgMount, ok := mountOf("/etc/stakeflow/worker.json")
	require.True(t, ok, "nothing is mounted at /etc/stakeflow")
	require.NotNil(t, cfgMount.vol.ConfigMap, "/etc/stakeflow is not a ConfigMap volume")
	assert.Equal(t, cm.Name, cfgMount.vol.ConfigMap.Name)
	assert.True(t, cfgMount.ReadOnly)
	cfg := deploymentWorkerConfig(t, ms)

	// The token file is in a Secret volume. (The keys are not: they reach the worker as an
	// in-memory copy, see TestDeploymentKeysReachWorkerOnlyAsCopy.)
	secretFile := func(key string, path string) {
		m, ok := mountOf(path)
		if assert.True(t, ok, "%s %s is not in a mounted volume", key, path) {
			assert.NotNil(t, m.vol.Secret, "%s %s is not in a Secret volume", key, path)
		}
	}
	secretFile("service-token-file", cfg["service-token-file"].(string))
	if tokenMount, ok := mountOf(cfg["service-token-file"].(string)); ok && tokenMount.vol.Secret != nil {
		assert.NotEqual(t, keysSecret, tokenMount.vol.Secret.SecretName, "the token and the keys belong in separate Secrets")
	}

	// The health server listens where the probes knock.
	host, port, err := net.SplitHostPort(cfg["health-addr"].(string))
	require.NoError(t, err)
	assert.NotEqual(t, "127.0.0.1", host, "health-addr on loopback is unreachable for the kubelet")
	assert.Equal(t, port, fmt.Sprint(c.Ports[0].ContainerPort))

	// TLS files, when configured, come from a mounted Secret too.
	for _, k := range []string{"tls-cert", "tls-key", "tls-ca"} {
		if v, ok := cfg[k].(string); ok && v != "" {
			secretFile(k, v)
		}
	}
}

func TestSecretsAreTemplates(t *testing.T) {
	ms := loadManifests(t)
	n := 0
	for _, m := range ms {
		s, ok := m.obj.(*corev1.Secret)
		if !ok {
			continue
		}
		n++
		assert.Equal(t, "secret.template.yaml", m.file, "Secret %s outside the template file", s.Name)
		assert.Empty(t, s.Data, "Secret %s carries data", s.Name)
		assert.Empty(t, s.StringData, "Secret %s carries stringData", s.Name)
	}
	assert.Equal(t, 4, n)
	// No other file in the directory smuggles secret material either.
	files, err := filepath.Glob(deployPath(t, "k8s", "*"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.False(t, bytes.Contains(b, []byte("PRIVATE KEY")), "%s holds a private key", f)
		assert.False(t, bytes.Contains(b, []byte("stringData:")), "%s holds stringData", f)
	}
}

func TestPodDisruptionBudget(t *testing.T) {
	ms := loadManifests(t)
	d := workerDeployment(t, ms)
	pdb := only[*policyv1.PodDisruptionBudget](t, ms)
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	require.NoError(t, err)
	require.False(t, sel.Empty(), "the PDB selects every pod in the namespace")
	assert.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)), "the PDB selector %s misses the worker pods %v", sel, d.Spec.Template.Labels)
	require.NotNil(t, pdb.Spec.MinAvailable, "use minAvailable")
	assert.Nil(t, pdb.Spec.MaxUnavailable)
	// A drain can always make progress: fewer pods must stay than there are.
	assert.Less(t, pdb.Spec.MinAvailable.IntValue(), int(*d.Spec.Replicas))
	assert.GreaterOrEqual(t, pdb.Spec.MinAvailable.IntValue(), 1)
}

func TestKustomization(t *testing.T) {
	raw := readFile(t, deployPath(t, "k8s", "kustomization.yaml"))
	var k kustomize.Kustomization
	require.NoError(t, yaml.UnmarshalStrict(raw, &k), "kustomization.yaml")
	assert.Equal(t, kustomize.KustomizationVersion, k.APIVersion)
	assert.Equal(t, kustomize.KustomizationKind, k.Kind)
	assert.NotEmpty(t, k.Namespace)

	// Every manifest but the Secret templates is applied; the templates never are, so
	// `kubectl apply -k` cannot create or clobber the real Secrets.
	files, err := filepath.Glob(deployPath(t, "k8s", "*.yaml"))
	require.NoError(t, err)
	var want []string
	for _, f := range files {
		base := filepath.Base(f)
		if base != "kustomization.yaml" && !strings.HasSuffix(base, ".template.yaml") {
			want = append(want, base)
		}
	}
	got := slices.Clone(k.Resources)
	sort.Strings(got)
	sort.Strings(want)
	assert.Equal(t, want, got)
	assert.Empty(t, k.SecretGenerator, "Secrets are created out of band")

	// One images entry per stakeflow image the Deployments run, each with a tag or digest.
	ms := loadManifests(t)
	var want2 []string
	for _, d := range []*appsv1.Deployment{workerDeployment(t, ms), named[*appsv1.Deployment](t, ms, codecName)} {
		image, _, _ := strings.Cut(d.Spec.Template.Spec.Containers[0].Image, ":")
		want2 = append(want2, image)
	}
	var got2 []string
	for _, img := range k.Images {
		got2 = append(got2, img.Name)
		assert.NotEmpty(t, img.NewTag+img.Digest, "kustomize images entry %s has no tag or digest", img.Name)
	}
	assert.ElementsMatch(t, want2, got2, "kustomize images entries")
}
