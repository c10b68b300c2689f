package check

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// placeholderEnv is the environment compose.yaml is interpolated with: one variable set to a
// recognisable value, the others left to their defaults.
var placeholderEnv = map[string]string{"POSTGRES_PASSWORD": "placeholder-db-password"}

// loadCompose loads deploy/compose.yaml as `docker compose -f deploy/compose.yaml` would, with
// env as the environment.
func loadCompose(t *testing.T, env map[string]string) *types.Project {
	t.Helper()
	file := deployPath(t, "compose.yaml")
	project, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  filepath.Dir(file),
		ConfigFiles: []types.ConfigFile{{Filename: file}},
		Environment: env,
	}, func(o *loader.Options) {
		o.SetProjectName("stakeflow", true)
		o.ResolvePaths = true
	})
	require.NoError(t, err, "compose.yaml does not load")
	return project
}

func TestComposeLoads(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	assert.Equal(t, "stakeflow", p.Name)

	var names []string
	for n := range p.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	assert.Equal(t, []string{"codec-server", "codec-token", "keys", "payload-keyset", "postgresql", "sandbox", "setup", "temporal", "temporal-namespace", "temporal-schema", "temporal-ui", "worker"}, names)

	// Interpolation: the variable given wins, the others take their defaults.
	assert.Equal(t, "placeholder-db-password", *p.Services["postgresql"].Environment["POSTGRES_PASSWORD"])
	assert.Equal(t, "placeholder-db-password", *p.Services["temporal"].Environment["POSTGRES_PWD"])
	assert.Equal(t, "placeholder-db-password", *p.Services["temporal-schema"].Environment["SQL_PASSWORD"])
	for name, s := range p.Services {
		assert.NotEmpty(t, s.Image, "service %s has no image", name)
		assert.False(t, strings.HasSuffix(s.Image, ":") || strings.HasSuffix(s.Image, ":latest"), "service %s: image %q is not pinned", name, s.Image)
	}
}

func TestComposeVariablesHaveDefaults(t *testing.T) {
	var model map[string]any
	require.NoError(t, yaml.Unmarshal(readFile(t, deployPath(t, "compose.yaml")), &model))
	vars := template.ExtractVariables(model, template.DefaultPattern)
	require.NotEmpty(t, vars, "compose.yaml is expected to take versions and the password from the environment")
	for name, v := range vars {
		assert.NotEmpty(t, v.DefaultValue, "${%s} has no default: `docker compose up` would need it set", name)
	}
	// With an empty environment the file still loads, with every default in place.
	p := loadCompose(t, map[string]string{})
	assert.Equal(t, "temporal", *p.Services["postgresql"].Environment["POSTGRES_PASSWORD"])
}

func TestComposeSecrets(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	localSecrets := deployPath(t, "local-secrets")
	want := map[string]string{
		"sandbox_token_secret": "sandbox-token-secret",
		"service_token":        "service-token",
		"solana_staker":        "solana-staker.json",
		"payload_keyset":       "payload-keyset.json",
		"codec_tokens":         "codec-tokens",
	}
	require.Len(t, p.Secrets, len(want))
	for name, file := range want {
		s, ok := p.Secrets[name]
		if assert.True(t, ok, "secret %s missing", name) {
			assert.Equal(t, filepath.Join(localSecrets, file), s.File, "secret %s", name)
			assert.Empty(t, s.Content, "secret %s must come from a file", name)
			assert.Empty(t, s.Environment, "secret %s must come from a file", name)
		}
	}
	// Who gets which secret: the sandbox only its token secret, the worker only its token, the
	// keys service only the Solana key (which it copies for the worker), the payload-keyset and
	// codec-token services only the keyset and the tokens (which they copy for user 65532).
	secretsOf := func(svc string) []string {
		var out []string
		for _, s := range p.Services[svc].Secrets {
			out = append(out, s.Source)
		}
		sort.Strings(out)
		return out
	}
	assert.Equal(t, []string{"sandbox_token_secret"}, secretsOf("sandbox"))
	assert.Equal(t, []string{"service_token"}, secretsOf("worker"))
	assert.Equal(t, []string{"solana_staker"}, secretsOf("keys"))
	assert.Equal(t, []string{"payload_keyset"}, secretsOf("payload-keyset"))
	assert.Equal(t, []string{"codec_tokens"}, secretsOf("codec-token"))
	for name := range p.Services {
		if name != "sandbox" && name != "worker" && name != "keys" && name != "payload-keyset" && name != "codec-token" {
			assert.Empty(t, secretsOf(name), "service %s gets secrets", name)
		}
	}
	// Secrets never travel in environment variables of stakeflow's own services.
	for _, svc := range []string{"sandbox", "setup", "worker", "codec-server"} {
		for k := range p.Services[svc].Environment {
			assert.NotContains(t, []string{"SANDBOX_TOKEN_SECRET", "STAKEFLOW_SERVICE_TOKEN"}, k, "service %s", svc)
		}
	}
	// The Web UI's codec endpoint (it holds a token) comes from a gitignored file, not compose.yaml.
	ui := p.Services["temporal-ui"]
	_, inline := ui.Environment["TEMPORAL_CODEC_ENDPOINT"]
	assert.False(t, inline, "TEMPORAL_CODEC_ENDPOINT written in compose.yaml: it carries a token")
	if assert.Len(t, ui.EnvFiles, 1, "temporal-ui reads its codec endpoint from one env file") {
		assert.Equal(t, filepath.Join(localSecrets, "codec-ui.env"), ui.EnvFiles[0].Path)
	}

	// The secret files are kept out of git and out of the image build context.
	gitignore := string(readFile(t, deployPath(t, ".gitignore")))
	assert.Contains(t, strings.Fields(gitignore), "/local-secrets/")
	dockerignore := string(readFile(t, deployPath(t, "Dockerfile.dockerignore")))
	assert.Contains(t, strings.Fields(dockerignore), "deploy/local-secrets")
}

func TestComposeHealthAndOrder(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	for _, svc := range []string{"postgresql", "temporal", "sandbox", "worker", "codec-server"} {
		hc := p.Services[svc].HealthCheck
		if assert.NotNil(t, hc, "service %s has no healthcheck", svc) {
			assert.False(t, hc.Disable, "service %s: healthcheck disabled", svc)
			assert.NotEmpty(t, hc.Test, "service %s: healthcheck has no test", svc)
		}
	}
	assert.Equal(t, []string{"CMD", "/usr/local/bin/healthprobe", "http://127.0.0.1:8081/readyz"},
		[]string(p.Services["worker"].HealthCheck.Test), "worker health is its /readyz")
	assert.Equal(t, []string{"CMD", "/usr/local/bin/healthprobe", "http://127.0.0.1:8082/readyz"},
		[]string(p.Services["codec-server"].HealthCheck.Test), "codec server health is its /readyz")

	deps := map[string]map[string]string{
		"temporal-schema":    {"postgresql": types.ServiceConditionHealthy},
		"temporal":           {"temporal-schema": types.ServiceConditionCompletedSuccessfully},
		"temporal-namespace": {"temporal": types.ServiceConditionHealthy},
		"temporal-ui":        {"temporal": types.ServiceConditionHealthy, "codec-server": types.ServiceConditionHealthy},
		"setup": {
			"temporal-namespace": types.ServiceConditionCompletedSuccessfully,
			"payload-keyset":     types.ServiceConditionCompletedSuccessfully,
		},
		"worker": {
			"setup":          types.ServiceConditionCompletedSuccessfully,
			"keys":           types.ServiceConditionCompletedSuccessfully,
			"payload-keyset": types.ServiceConditionCompletedSuccessfully,
			"sandbox":        types.ServiceConditionHealthy,
			"temporal":       types.ServiceConditionHealthy,
		},
		"codec-server": {
			"payload-keyset": types.ServiceConditionCompletedSuccessfully,
			"codec-token":    types.ServiceConditionCompletedSuccessfully,
		},
	}
	for svc, want := range deps {
		got := map[string]string{}
		for dep, d := range p.Services[svc].DependsOn {
			got[dep] = d.Condition
		}
		assert.Equal(t, want, got, "depends_on of %s", svc)
	}
	// One-shot jobs retry (a fresh namespace takes a moment to be served) but do not run forever.
	for _, svc := range []string{"temporal-schema", "temporal-namespace", "setup"} {
		assert.True(t, strings.HasPrefix(p.Services[svc].Restart, "on-failure"), "service %s restart %q", svc, p.Services[svc].Restart)
	}
	assert.Equal(t, []string{"setup"}, []string(p.Services["setup"].Command))
}

func TestComposePortsOnLoopback(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	for name, s := range p.Services {
		for _, port := range s.Ports {
			assert.Equal(t, "127.0.0.1", port.HostIP, "service %s publishes port %d beyond loopback", name, port.Target)
		}
	}
}

func TestComposeStakeflowImages(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	for svc, target := range map[string]string{"sandbox": "sandbox", "setup": "starter", "worker": "worker", "codec-server": "codec-server"} {
		b := p.Services[svc].Build
		if !assert.NotNil(t, b, "service %s is not built", svc) {
			continue
		}
		assert.Equal(t, repoRoot(t), b.Context, "service %s build context", svc)
		assert.Equal(t, "deploy/Dockerfile", filepath.ToSlash(b.Dockerfile), "service %s dockerfile", svc)
		assert.Equal(t, target, b.Target, "service %s build target", svc)
	}
	for _, svc := range []string{"setup", "worker", "codec-server"} {
		s := p.Services[svc]
		assert.True(t, s.ReadOnly, "service %s root filesystem is writable", svc)
		assert.Contains(t, s.CapDrop, "ALL", "service %s keeps capabilities", svc)
		assert.Contains(t, s.SecurityOpt, "no-new-privileges:true", "service %s", svc)
	}
	// Docker waits longer than the worker's stop-timeout before it kills the worker.
	if grace := p.Services["worker"].StopGracePeriod; assert.NotNil(t, grace, "worker has no stop_grace_period") {
		assert.Greater(t, time.Duration(*grace), 30*time.Second)
	}
}

func TestComposeWorkerConfig(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	w := p.Services["worker"]
	require.Len(t, w.Configs, 1)
	assert.Equal(t, "/etc/stakeflow/worker.json", w.Configs[0].Target)
	assert.Equal(t, []string{"--config", "/etc/stakeflow/worker.json"}, []string(w.Command))
	cfgFile := p.Configs[w.Configs[0].Source].File
	require.NotEmpty(t, cfgFile)

	cfg, errs := workerConfigErrors(readFile(t, cfgFile), workerFlags(t))
	require.Empty(t, errs)
	// The token file the worker reads is a secret compose mounts. (The key is not: it reaches the
	// worker as the keys service's copy, see TestComposeKeysReachWorkerOnlyAsCopy.)
	mounted := map[string]bool{}
	for _, s := range w.Secrets {
		mounted[secretTarget(s)] = true
	}
	assert.True(t, mounted[cfg["service-token-file"].(string)], "service-token-file %v is not a mounted secret", cfg["service-token-file"])
	assert.Equal(t, "http://sandbox:8088", cfg["service-url"])
	assert.Equal(t, "testnet=http://sandbox:8899", cfg["solana-rpc"])
	assert.Equal(t, "temporal:7233", cfg["temporal-address"])
	assert.Equal(t, "0.0.0.0:8081", cfg["health-addr"], "the health endpoint must be reachable from the healthcheck")
	for k, v := range w.Environment {
		assert.True(t, strings.HasPrefix(k, "STAKEFLOW_"), "worker env %s is not a flag twin", k)
		flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, "STAKEFLOW_"), "_", "-"))
		assert.True(t, workerFlags(t)[flag], "worker env %s names no flag", k)
		if v != nil && cfg[flag] != nil {
			assert.Equal(t, cfg[flag], *v, "worker env %s contradicts the config file", k)
		}
	}

	// The sandbox's own files exist where compose mounts them from.
	for _, f := range []string{"temporal/setup-schema.sh", "temporal/create-namespace.sh", "temporal/dynamicconfig.yaml", "temporal/postgres-init.sql", "temporal/config/docker.yaml"} {
		_, err := os.Stat(deployPath(t, filepath.FromSlash(f)))
		assert.NoError(t, err)
	}
}

// TestTemporalConfigIsTheOneComposeRuns: compose mounts temporal/config/docker.yaml over the
// server image's own configuration (the file `make cluster` runs the server with), the server
// renders it as a template, and every setting compose passes the server in its environment is one
// the file reads.
func TestTemporalConfigIsTheOneComposeRuns(t *testing.T) {
	p := loadCompose(t, placeholderEnv)
	srv := p.Services["temporal"]
	mounted := false
	for _, v := range srv.Volumes {
		if v.Target == "/etc/temporal/config/docker.yaml" {
			mounted = v.Source == deployPath(t, "temporal", "config", "docker.yaml") && v.ReadOnly
		}
	}
	assert.True(t, mounted, "compose's temporal service does not mount temporal/config/docker.yaml read-only over the image's configuration")

	cfg := string(readFile(t, deployPath(t, "temporal", "config", "docker.yaml")))
	first, _, _ := strings.Cut(cfg, "\n")
	assert.Equal(t, "# enable-template", first, "the server renders a configuration as a template only when it says so in a comment")
	for name := range srv.Environment {
		assert.True(t, strings.Contains(cfg, `env "`+name+`"`), "compose sets %s for the server, and the configuration does not read it", name)
	}
}
