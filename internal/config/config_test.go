package config

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// testAPIKey stands for a Pangolin API key: no output may contain it.
const testAPIKey = "pk-t3st-4p1-k3y-0123456789abcdef"

// testPlugins are the names Load accepts in these tests.
var testPlugins = Plugins{Sources: []string{"ingress", "httproute"}, Sinks: []string{"pangolinresource", "pangolin", "inmemory"}}

// loadWith loads with environ (KEY=VALUE entries) as the only PIC_ and PANGOLIN_
// variables of the process.
func loadWith(t *testing.T, args, environ []string, out io.Writer) (*Config, Origins, error) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "PIC_") || strings.HasPrefix(name, "PANGOLIN_") {
			t.Setenv(name, "") // restored after the test
			require.NoError(t, os.Unsetenv(name))
		}
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	return load(args, testPlugins, out, false)
}

func mustLoad(t *testing.T, args, environ []string) (*Config, Origins) {
	t.Helper()
	var out bytes.Buffer
	cfg, origins, err := loadWith(t, args, environ, &out)
	require.NoError(t, err)
	require.NotNil(t, cfg)
	assert.Empty(t, out.String(), "Load prints nothing unless --help is asked")
	return cfg, origins
}

// problemsOf returns the lines of an invalid-configuration error.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e)
	return e.Problems
}

func TestDefaults(t *testing.T) {
	cfg, origins := mustLoad(t, nil, nil)

	assert.Equal(t, &Config{
		Tunnels:            tunnel.Resolver{Default: tunnel.Tunnel{Name: "default"}, Aliases: map[string]tunnel.Tunnel{}},
		BackendScheme:      "http",
		ClusterDomain:      "cluster.local",
		DefaultSSO:         true,
		DefaultBlockAccess: false,
		LoadBalancerClass:  "pangolin.io/tunnel",
		Sources:            []string{"ingress"},
		Sink:               "pangolinresource",
		Pangolin: Pangolin{OwnerID: "default", DriftPeriod: time.Hour, MaxConcurrentReads: 4, NewtImage: DefaultNewtImage, NewtReplicas: 1, NewtOwner: "pangolin-ingress-controller",
			NewtCPURequest: DefaultNewtCPURequest, NewtMemoryRequest: DefaultNewtMemoryRequest, NewtMemoryLimit: DefaultNewtMemoryLimit},
		HostPolicy:              hostpolicy.Policy{},
		WatchNamespaces:         []string{},
		SecretNamespaces:        []string{},
		ResyncPeriod:            5 * time.Minute,
		MaxConcurrentReconciles: 4,
		KubeAPIQPS:              -1,
		KubeAPIBurst:            100,
		MetricsBindAddress:      ":8080",
		HealthProbeBindAddress:  ":8081",
		PprofBindAddress:        "0",
		LeaderElection:          LeaderElection{ID: "pangolin-ingress-controller"},
		LogLevel:                "info",
		LogFormat:               "json",
	}, cfg)
	assert.Equal(t, Default(), cfg, "Default() is what Load gives with nothing configured")

	for _, k := range keys {
		if k.name != "tunnels" {
			assert.Equal(t, Origin{Kind: FromDefault}, origins[k.name], k.name)
		}
	}
	assert.Equal(t, "default", origins["backendScheme"].String())
}

func TestPublicAddress(t *testing.T) {
	cases := []struct {
		name, address, url, want string
	}{
		{name: "the configured address wins", address: "203.0.113.7", url: "https://api.example.com/v1", want: "203.0.113.7"},
		{name: "else the host of Pangolin's API URL", url: "https://pangolin.example.com:3003/v1", want: "pangolin.example.com"},
		{name: "else none", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{LoadBalancerAddress: tc.address, Pangolin: Pangolin{URL: tc.url}}
			assert.Equal(t, tc.want, c.PublicAddress())
		})
	}
}

func TestDefaultDoesNotShareSlices(t *testing.T) {
	a := Default()
	a.Sources[0] = "changed"
	a.WatchNamespaces = append(a.WatchNamespaces, "changed")
	assert.Equal(t, Default().Sources, []string{"ingress"})
	assert.Empty(t, Default().WatchNamespaces)
}

// setting is one key seen from each source: the file value (YAML), the environment value,
// the flag value, and what each one gives.
type setting struct {
	key                                   string
	file, env, flag                       string
	get                                   func(*Config) any
	wantDefault, wantFile, wantEnv, wantF any
}

var settings = []setting{
	{"defaultTunnel", "file-tunnel", "env-ns/env-tunnel", "flag-tunnel",
		func(c *Config) any { return c.Tunnels.Default },
		tunnel.Tunnel{Name: "default"}, tunnel.Tunnel{Name: "file-tunnel"}, tunnel.Tunnel{Namespace: "env-ns", Name: "env-tunnel"}, tunnel.Tunnel{Name: "flag-tunnel"}},
	{"tunnelNamespace", "file-ns", "env-ns", "flag-ns",
		func(c *Config) any { return c.Tunnels.Namespace }, "", "file-ns", "env-ns", "flag-ns"},
	{"onlyListedTunnels", "true", "false", "true",
		func(c *Config) any { return c.Tunnels.OnlyListed }, false, true, false, true},
	{"tunnelClassMapping", "edge=file-tunnel", "edge=env-tunnel", "edge=flag-tunnel",
		func(c *Config) any { return c.Tunnels.Aliases["edge"].Name }, "", "file-tunnel", "env-tunnel", "flag-tunnel"},
	{"backendScheme", "https", "http", "https",
		func(c *Config) any { return c.BackendScheme }, "http", "https", "http", "https"},
	{"clusterDomain", "file.example", "env.example", "flag.example",
		func(c *Config) any { return c.ClusterDomain }, "cluster.local", "file.example", "env.example", "flag.example"},
	{"defaultSSO", "false", "true", "false",
		func(c *Config) any { return c.DefaultSSO }, true, false, true, false},
	{"defaultBlockAccess", "true", "false", "true",
		func(c *Config) any { return c.DefaultBlockAccess }, false, true, false, true},
	{"loadBalancerClass", "file.example/lb", "env.example/lb", "flag.example/lb",
		func(c *Config) any { return c.LoadBalancerClass }, "pangolin.io/tunnel", "file.example/lb", "env.example/lb", "flag.example/lb"},
	{"healthChecks", "true", "false", "true",
		func(c *Config) any { return c.HealthChecks }, false, true, false, true},
	{"loadBalancerAddress", "file.example.com", "192.0.2.1", "2001:db8::1",
		func(c *Config) any { return c.LoadBalancerAddress }, "", "file.example.com", "192.0.2.1", "2001:db8::1"},
	{"sources", "[httproute]", "ingress, httproute", "httproute",
		func(c *Config) any { return c.Sources }, []string{"ingress"}, []string{"httproute"}, []string{"ingress", "httproute"}, []string{"httproute"}},
	{"watchNamespaces", "[file-a, file-b]", "env-a,env-b", "flag-a",
		func(c *Config) any { return c.WatchNamespaces }, []string{}, []string{"file-a", "file-b"}, []string{"env-a", "env-b"}, []string{"flag-a"}},
	{"secretNamespaces", "[file-a, file-b]", "env-a,env-b", "flag-a",
		func(c *Config) any { return c.SecretNamespaces }, []string{}, []string{"file-a", "file-b"}, []string{"env-a", "env-b"}, []string{"flag-a"}},
	{"resyncPeriod", "1m", "90s", "1h",
		func(c *Config) any { return c.ResyncPeriod }, 5 * time.Minute, time.Minute, 90 * time.Second, time.Hour},
	{"maxConcurrentReconciles", "1", "2", "3",
		func(c *Config) any { return c.MaxConcurrentReconciles }, 4, 1, 2, 3},
	{"kubeconfig", "/file/kubeconfig", "/env/kubeconfig", "/flag/kubeconfig",
		func(c *Config) any { return c.Kubeconfig }, "", "/file/kubeconfig", "/env/kubeconfig", "/flag/kubeconfig"},
	{"kubeAPIQPS", "10", "20.5", "30",
		func(c *Config) any { return c.KubeAPIQPS }, float32(-1), float32(10), float32(20.5), float32(30)},
	{"kubeAPIBurst", "10", "20", "30",
		func(c *Config) any { return c.KubeAPIBurst }, 100, 10, 20, 30},
	{"metricsBindAddress", `"0"`, ":9090", "127.0.0.1:9091",
		func(c *Config) any { return c.MetricsBindAddress }, ":8080", "0", ":9090", "127.0.0.1:9091"},
	{"healthProbeBindAddress", `":9081"`, ":9082", "0",
		func(c *Config) any { return c.HealthProbeBindAddress }, ":8081", ":9081", ":9082", "0"},
	{"pprofBindAddress", `"127.0.0.1:6060"`, ":6061", "0",
		func(c *Config) any { return c.PprofBindAddress }, "0", "127.0.0.1:6060", ":6061", "0"},
	{"leaderElection.enabled", "true", "false", "true",
		func(c *Config) any { return c.LeaderElection.Enabled }, false, true, false, true},
	{"leaderElection.id", "file-lease", "env-lease", "flag-lease",
		func(c *Config) any { return c.LeaderElection.ID }, "pangolin-ingress-controller", "file-lease", "env-lease", "flag-lease"},
	{"leaderElection.namespace", "file-ns", "env-ns", "flag-ns",
		func(c *Config) any { return c.LeaderElection.Namespace }, "", "file-ns", "env-ns", "flag-ns"},
	{"logLevel", "debug", "warn", "error",
		func(c *Config) any { return c.LogLevel }, "info", "debug", "warn", "error"},
	{"logFormat", "console", "json", "console",
		func(c *Config) any { return c.LogFormat }, "json", "console", "json", "console"},
	{"sink", "inmemory", "pangolinresource", "inmemory",
		func(c *Config) any { return c.Sink }, "pangolinresource", "inmemory", "pangolinresource", "inmemory"},
	{"pangolin.url", "https://file.example/v1", "http://env.example:3003/v1", "https://flag.example/v1",
		func(c *Config) any { return c.Pangolin.URL }, "", "https://file.example/v1", "http://env.example:3003/v1", "https://flag.example/v1"},
	{"pangolin.org", "file-org", "env-org", "flag-org",
		func(c *Config) any { return c.Pangolin.Org }, "", "file-org", "env-org", "flag-org"},
	{"pangolin.apiKeyFile", keyFiles.file, keyFiles.env, keyFiles.flag,
		func(c *Config) any { return c.Pangolin.APIKeyFile + "=" + c.Pangolin.APIKey.Reveal() }, "=",
		keyFiles.file + "=file-key", keyFiles.env + "=env-key", keyFiles.flag + "=flag-key"},
	{"pangolin.ownerId", "file-cluster", "env-cluster", "flag-cluster",
		func(c *Config) any { return c.Pangolin.OwnerID }, "default", "file-cluster", "env-cluster", "flag-cluster"},
	{"pangolin.caFile", keyFiles.fileCA, keyFiles.envCA, keyFiles.flagCA,
		func(c *Config) any { return c.Pangolin.CAFile }, "", keyFiles.fileCA, keyFiles.envCA, keyFiles.flagCA},
	{"pangolin.driftPeriod", "20m", "30m", "2h",
		func(c *Config) any { return c.Pangolin.DriftPeriod }, time.Hour, 20 * time.Minute, 30 * time.Minute, 2 * time.Hour},
	{"pangolin.maxConcurrentReads", "2", "8", "16",
		func(c *Config) any { return c.Pangolin.MaxConcurrentReads }, 4, 2, 8, 16},
	{"pangolin.newtImage", "file.example/newt:1.0.0", "env.example/newt:1.0.1", "flag.example/newt:1.0.2@sha256:" + strings.Repeat("ab", 32),
		func(c *Config) any { return c.Pangolin.NewtImage }, DefaultNewtImage, "file.example/newt:1.0.0", "env.example/newt:1.0.1", "flag.example/newt:1.0.2@sha256:" + strings.Repeat("ab", 32)},
	{"pangolin.newtReplicas", "2", "3", "4",
		func(c *Config) any { return c.Pangolin.NewtReplicas }, 1, 2, 3, 4},
	{"pangolin.newtCPURequest", "5m", "6m", "7m",
		func(c *Config) any { return c.Pangolin.NewtCPURequest }, DefaultNewtCPURequest, "5m", "6m", "7m"},
	{"pangolin.newtMemoryRequest", "16Mi", "20Mi", "24Mi",
		func(c *Config) any { return c.Pangolin.NewtMemoryRequest }, DefaultNewtMemoryRequest, "16Mi", "20Mi", "24Mi"},
	{"pangolin.newtCPULimit", "1", "2", "500m",
		func(c *Config) any { return c.Pangolin.NewtCPULimit }, "", "1", "2", "500m"},
	{"pangolin.newtMemoryLimit", "200Mi", "300Mi", "400Mi",
		func(c *Config) any { return c.Pangolin.NewtMemoryLimit }, DefaultNewtMemoryLimit, "200Mi", "300Mi", "400Mi"},
	{"pangolin.newtEndpoint", "https://file.example", "https://env.example", "https://flag.example",
		func(c *Config) any { return c.Pangolin.NewtEndpoint }, "", "https://file.example", "https://env.example", "https://flag.example"},
	{"pangolin.newtOwner", "file-pic", "env-pic", "flag-pic",
		func(c *Config) any { return c.Pangolin.NewtOwner }, "pangolin-ingress-controller", "file-pic", "env-pic", "flag-pic"},
}

// fileFor writes one key as YAML, nesting dotted keys.
func fileFor(name, value string) string {
	if group, child, nested := strings.Cut(name, "."); nested {
		return group + ":\n  " + child + ": " + value + "\n"
	}
	return name + ": " + value + "\n"
}

func TestEverySettingFromEverySource(t *testing.T) {
	covered := map[string]bool{}
	for _, s := range settings {
		k := keyByName(s.key)
		covered[s.key] = true
		require.NotEmpty(t, k.env, s.key)
		require.NotEmpty(t, k.flag, s.key)
		flag := "--" + k.flag + "=" + s.flag

		t.Run(s.key+" has its default when nothing sets it", func(t *testing.T) {
			cfg, origins := mustLoad(t, nil, nil)
			assert.Equal(t, s.wantDefault, s.get(cfg))
			assert.Equal(t, Origin{Kind: FromDefault}, origins[s.key])
		})
		t.Run(s.key+" comes from the file over the default", func(t *testing.T) {
			path := writeConfig(t, fileFor(s.key, s.file))
			cfg, origins := mustLoad(t, []string{"--config", path}, nil)
			assert.Equal(t, s.wantFile, s.get(cfg))
			assert.Equal(t, Origin{Kind: FromFile, Name: path}, origins[s.key])
		})
		t.Run(s.key+" comes from "+k.env[0]+" over the file", func(t *testing.T) {
			path := writeConfig(t, fileFor(s.key, s.file))
			cfg, origins := mustLoad(t, []string{"--config", path}, []string{k.env[0] + "=" + s.env})
			assert.Equal(t, s.wantEnv, s.get(cfg))
			assert.Equal(t, Origin{Kind: FromEnv, Name: k.env[0]}, origins[s.key])
		})
		t.Run(s.key+" comes from --"+k.flag+" over the environment and the file", func(t *testing.T) {
			path := writeConfig(t, fileFor(s.key, s.file))
			cfg, origins := mustLoad(t, []string{"--config", path, flag}, []string{k.env[0] + "=" + s.env})
			assert.Equal(t, s.wantF, s.get(cfg))
			assert.Equal(t, Origin{Kind: FromFlag, Name: "--" + k.flag}, origins[s.key])
		})
		t.Run(s.key+" comes from --"+k.flag+" over the file alone", func(t *testing.T) {
			path := writeConfig(t, fileFor(s.key, s.file))
			cfg, _ := mustLoad(t, []string{"--config", path, flag}, nil)
			assert.Equal(t, s.wantF, s.get(cfg))
		})
	}
	for _, k := range keys {
		if k.flag != "" {
			assert.True(t, covered[k.name], "every key with a flag is in the precedence table: %s", k.name)
		}
	}
}

func TestConflictsBetweenSources(t *testing.T) {
	path := writeConfig(t, `
backendScheme: https
logLevel: debug
watchNamespaces: [from-file]
defaultTunnel:
  name: file-tunnel
  allowedNamespaces: [team-a]
leaderElection:
  enabled: true
  id: file-lease
`)
	tests := []struct {
		name    string
		args    []string
		environ []string
		check   func(t *testing.T, c *Config, o Origins)
	}{
		{
			name:    "a flag beats a variable which beats the file, key by key",
			args:    []string{"--config", path, "--log-level=warn"},
			environ: []string{"PIC_LOG_LEVEL=error", "PIC_BACKEND_SCHEME=http"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, "warn", c.LogLevel)
				assert.Equal(t, "http", c.BackendScheme)
				assert.Equal(t, []string{"from-file"}, c.WatchNamespaces)
				assert.Equal(t, "flag --log-level", o["logLevel"].String())
				assert.Equal(t, "env PIC_BACKEND_SCHEME", o["backendScheme"].String())
				assert.Equal(t, "file "+path, o["watchNamespaces"].String())
			},
		},
		{
			name:    "an empty variable counts as unset",
			args:    []string{"--config", path},
			environ: []string{"PIC_BACKEND_SCHEME=", "PIC_LOG_LEVEL=  "},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, "https", c.BackendScheme)
				assert.Equal(t, "debug", c.LogLevel)
				assert.Equal(t, FromFile, o["logLevel"].Kind)
			},
		},
		{
			name:    "an explicitly empty flag overrides a variable",
			args:    []string{"--config", path, "--watch-namespaces="},
			environ: []string{"PIC_WATCH_NAMESPACES=from-env"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Empty(t, c.WatchNamespaces)
				assert.Equal(t, FromFlag, o["watchNamespaces"].Kind)
			},
		},
		{
			name: "repeated list flags add up and repeated items count once",
			args: []string{"--watch-namespaces", "a,b", "--watch-namespaces", "c", "--watch-namespaces=a", "--sources", "httproute", "--sources", "ingress"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, []string{"a", "b", "c"}, c.WatchNamespaces)
				assert.Equal(t, []string{"httproute", "ingress"}, c.Sources)
			},
		},
		{
			name:    "a bool flag alone means true and beats a variable",
			args:    []string{"--default-block-access"},
			environ: []string{"PIC_DEFAULT_BLOCK_ACCESS=false"},
			check:   func(t *testing.T, c *Config, o Origins) { assert.True(t, c.DefaultBlockAccess) },
		},
		{
			name:    "bools accept the usual spellings of true and false",
			args:    []string{"--leader-elect=FALSE", "--default-sso=0"},
			environ: []string{"PIC_DEFAULT_BLOCK_ACCESS=True"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.False(t, c.LeaderElection.Enabled)
				assert.False(t, c.DefaultSSO)
				assert.True(t, c.DefaultBlockAccess)
			},
		},
		{
			name:    "a variable replaces the file's whole defaultTunnel object",
			args:    []string{"--config", path},
			environ: []string{"PIC_DEFAULT_TUNNEL_NAME=other"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, tunnel.Tunnel{Name: "other"}, c.Tunnels.Default)
			},
		},
		{
			name: "the file's defaultTunnel object keeps its allowed namespaces",
			args: []string{"--config", path},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, tunnel.Tunnel{Name: "file-tunnel", AllowedNamespaces: []string{"team-a"}}, c.Tunnels.Default)
				assert.Equal(t, "file "+path, o["defaultTunnel"].String())
			},
		},
		{
			name:    "an empty --default-tunnel leaves no default tunnel",
			args:    []string{"--config", path, "--default-tunnel="},
			environ: []string{"PIC_DEFAULT_TUNNEL_NAME=other"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, tunnel.Tunnel{}, c.Tunnels.Default)
			},
		},
		{
			name:    "nested keys mix sources: the file's enabled stays beside the variable's id",
			args:    []string{"--config", path, "--leader-election-namespace=flag-ns"},
			environ: []string{"PIC_LEADER_ELECTION_ID=env-lease"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, LeaderElection{Enabled: true, ID: "env-lease", Namespace: "flag-ns"}, c.LeaderElection)
				assert.Equal(t, "file "+path, o["leaderElection.enabled"].String())
			},
		},
		{
			name:    "--config beats PIC_CONFIG",
			args:    []string{"--config", path},
			environ: []string{"PIC_CONFIG=/does/not/exist.yaml"},
			check:   func(t *testing.T, c *Config, o Origins) { assert.Equal(t, "https", c.BackendScheme) },
		},
		{
			name:    "PIC_CONFIG names the file when --config is absent",
			environ: []string{"PIC_CONFIG=" + path},
			check:   func(t *testing.T, c *Config, o Origins) { assert.Equal(t, "https", c.BackendScheme) },
		},
		{
			name:    "values are trimmed, as a ConfigMap often adds a newline",
			environ: []string{"PIC_BACKEND_SCHEME=https\n", "PIC_RESYNC_PERIOD= 30s ", "PIC_MAX_CONCURRENT_RECONCILES=8\n"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, "https", c.BackendScheme)
				assert.Equal(t, 30*time.Second, c.ResyncPeriod)
				assert.Equal(t, 8, c.MaxConcurrentReconciles)
			},
		},
		{
			name: "an empty file is no configuration",
			args: []string{"--config", writeConfig(t, "# nothing yet\n")},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, Default(), c)
			},
		},
		{
			name: "a string key takes any YAML scalar, and a list key a comma-separated string",
			args: []string{"--config", writeConfig(t, "metricsBindAddress: 0\ntunnelNamespace: 123\nwatchNamespaces: a, b\n")},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, "0", c.MetricsBindAddress)
				assert.Equal(t, "123", c.Tunnels.Namespace)
				assert.Equal(t, []string{"a", "b"}, c.WatchNamespaces)
			},
		},
		{
			name: "print-config is a command, not a setting",
			args: []string{"--print-config"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.True(t, c.PrintConfig)
				assert.NotContains(t, o, "printConfig")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, origins := mustLoad(t, tt.args, tt.environ)
			tt.check(t, cfg, origins)
		})
	}
}

func TestDefaultTunnelVariableAlias(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		environ    []string
		want       tunnel.Tunnel
		wantOrigin string
	}{
		{"PANGOLIN_DEFAULT_TUNNEL_NAME alone sets the default tunnel",
			nil, []string{"PANGOLIN_DEFAULT_TUNNEL_NAME=legacy"},
			tunnel.Tunnel{Name: "legacy"}, "env PANGOLIN_DEFAULT_TUNNEL_NAME"},
		{"PIC_DEFAULT_TUNNEL_NAME wins over PANGOLIN_DEFAULT_TUNNEL_NAME",
			nil, []string{"PANGOLIN_DEFAULT_TUNNEL_NAME=legacy", "PIC_DEFAULT_TUNNEL_NAME=current"},
			tunnel.Tunnel{Name: "current"}, "env PIC_DEFAULT_TUNNEL_NAME"},
		{"PIC_DEFAULT_TUNNEL_NAME wins whatever the order of the environment",
			nil, []string{"PIC_DEFAULT_TUNNEL_NAME=current", "PANGOLIN_DEFAULT_TUNNEL_NAME=legacy"},
			tunnel.Tunnel{Name: "current"}, "env PIC_DEFAULT_TUNNEL_NAME"},
		{"an empty PIC_DEFAULT_TUNNEL_NAME leaves the alias in charge",
			nil, []string{"PIC_DEFAULT_TUNNEL_NAME=", "PANGOLIN_DEFAULT_TUNNEL_NAME=ns/legacy"},
			tunnel.Tunnel{Namespace: "ns", Name: "legacy"}, "env PANGOLIN_DEFAULT_TUNNEL_NAME"},
		{"--default-tunnel beats both variables",
			[]string{"--default-tunnel=flagged"}, []string{"PANGOLIN_DEFAULT_TUNNEL_NAME=legacy", "PIC_DEFAULT_TUNNEL_NAME=current"},
			tunnel.Tunnel{Name: "flagged"}, "flag --default-tunnel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, origins := mustLoad(t, tt.args, tt.environ)
			assert.Equal(t, tt.want, cfg.Tunnels.Default)
			assert.Equal(t, tt.wantOrigin, origins["defaultTunnel"].String())
		})
	}
}

func TestTunnelClassMapping(t *testing.T) {
	tests := []struct {
		name    string
		mapping string
		want    map[string]tunnel.Tunnel
		origins map[string]string
	}{
		{
			name:    "one entry per line, as in the specification",
			mapping: "edge-eu=edge-eu-tunnel\nedge-us=edge-us-tunnel\nstaging=staging-tunnel\n",
			want: map[string]tunnel.Tunnel{
				"edge-eu": {Name: "edge-eu-tunnel"}, "edge-us": {Name: "edge-us-tunnel"}, "staging": {Name: "staging-tunnel"},
			},
			origins: map[string]string{"edge-us": "env PIC_TUNNEL_CLASS_MAPPING", "staging": "env PIC_TUNNEL_CLASS_MAPPING"},
		},
		{
			name:    "commas separate entries too, with blanks around them",
			mapping: "edge-eu=edge-eu-tunnel, edge-us = edge-us-tunnel ,staging=staging-tunnel,",
			want: map[string]tunnel.Tunnel{
				"edge-eu": {Name: "edge-eu-tunnel"}, "edge-us": {Name: "edge-us-tunnel"}, "staging": {Name: "staging-tunnel"},
			},
			origins: map[string]string{"staging": "env PIC_TUNNEL_CLASS_MAPPING"},
		},
		{
			name:    "a tunnel may be namespace/name",
			mapping: "edge-eu=network-eu/edge-eu-tunnel\nlocal=local-tunnel",
			want: map[string]tunnel.Tunnel{
				"edge-eu": {Namespace: "network-eu", Name: "edge-eu-tunnel"}, "local": {Name: "local-tunnel"},
			},
		},
		{
			name:    "blank lines and comments are ignored",
			mapping: "# EU first\n\nedge-eu=edge-eu-tunnel   # the Paris site\n   \n# edge-us=disabled\r\nstaging=staging-tunnel\r\n",
			want: map[string]tunnel.Tunnel{
				"edge-eu": {Name: "edge-eu-tunnel"}, "staging": {Name: "staging-tunnel"},
			},
			origins: map[string]string{"edge-eu": "env PIC_TUNNEL_CLASS_MAPPING", "staging": "env PIC_TUNNEL_CLASS_MAPPING"},
		},
		{
			name:    "lines and commas mix",
			mapping: "a=t1,b=t2\nc=ns/t3",
			want: map[string]tunnel.Tunnel{
				"a": {Name: "t1"}, "b": {Name: "t2"}, "c": {Namespace: "ns", Name: "t3"},
			},
		},
		{
			name:    "an empty mapping defines no alias",
			mapping: "# nothing\n",
			want:    map[string]tunnel.Tunnel{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, origins := mustLoad(t, nil, []string{"PIC_TUNNEL_CLASS_MAPPING=" + tt.mapping})
			assert.Equal(t, tt.want, cfg.Tunnels.Aliases)
			for alias, want := range tt.origins {
				assert.Equal(t, want, origins["tunnels."+alias].String(), alias)
			}
		})
	}

	t.Run("a mapping in the file gives each entry the file as origin", func(t *testing.T) {
		path := writeConfig(t, "logLevel: info\ntunnelClassMapping: |\n  # aliases\n  edge-eu=edge-eu-tunnel\n  edge-us=network-us/edge-us-tunnel\n")
		cfg, origins := mustLoad(t, []string{"--config", path}, nil)
		assert.Equal(t, map[string]tunnel.Tunnel{
			"edge-eu": {Name: "edge-eu-tunnel"}, "edge-us": {Namespace: "network-us", Name: "edge-us-tunnel"},
		}, cfg.Tunnels.Aliases)
		assert.Equal(t, "file "+path, origins["tunnels.edge-eu"].String())
		assert.Equal(t, "file "+path, origins["tunnels.edge-us"].String())
	})

	t.Run("the mapping and the tunnels section add up when their aliases differ", func(t *testing.T) {
		path := writeConfig(t, "tunnels:\n  edge-eu: eu-tunnel\n")
		cfg, _ := mustLoad(t, []string{"--config", path, "--tunnel-class-mapping=edge-us=us-tunnel"}, nil)
		assert.Equal(t, map[string]tunnel.Tunnel{"edge-eu": {Name: "eu-tunnel"}, "edge-us": {Name: "us-tunnel"}}, cfg.Tunnels.Aliases)
	})
}

func TestMultiTunnelFile(t *testing.T) {
	const path = "testdata/multi-tunnel.yaml"
	cfg, origins := mustLoad(t, []string{"--config", path}, nil)

	assert.Equal(t, &Config{
		Tunnels: tunnel.Resolver{
			Default:   tunnel.Tunnel{Name: "main"},
			Namespace: "pangolin-system",
			Aliases: map[string]tunnel.Tunnel{
				"edge-eu": {Name: "edge-eu-tunnel"},
				"edge-us": {Name: "edge-us-tunnel", Namespace: "network-us"},
				"staging": {Name: "staging-tunnel", AllowedNamespaces: []string{"staging", "qa"}},
			},
			OnlyListed: true,
		},
		BackendScheme:      "http",
		ClusterDomain:      "cluster.local",
		DefaultSSO:         true,
		DefaultBlockAccess: false,
		LoadBalancerClass:  "pangolin.io/tunnel",
		Sources:            []string{"ingress"},
		Sink:               "pangolinresource",
		Pangolin: Pangolin{OwnerID: "default", DriftPeriod: time.Hour, MaxConcurrentReads: 4, NewtImage: DefaultNewtImage, NewtReplicas: 1, NewtOwner: "pangolin-ingress-controller",
			NewtCPURequest: DefaultNewtCPURequest, NewtMemoryRequest: DefaultNewtMemoryRequest, NewtMemoryLimit: DefaultNewtMemoryLimit},
		HostPolicy:              hostpolicy.Policy{},
		WatchNamespaces:         []string{},
		SecretNamespaces:        []string{},
		ResyncPeriod:            5 * time.Minute,
		MaxConcurrentReconciles: 4,
		KubeAPIQPS:              -1,
		KubeAPIBurst:            100,
		MetricsBindAddress:      ":8080",
		HealthProbeBindAddress:  ":8081",
		PprofBindAddress:        "0",
		LeaderElection:          LeaderElection{Enabled: true, ID: "pangolin-ingress-controller", Namespace: "pangolin-system"},
		LogLevel:                "info",
		LogFormat:               "json",
	}, cfg)
	for _, k := range keys {
		// hostPolicy is a multi-tenant section, not a multi-tunnel one (TestHostPolicy).
		if k.name != "tunnels" && k.name != "tunnelClassMapping" && k.name != "hostPolicy" {
			if k.name != "sink" && !strings.HasPrefix(k.name, "pangolin.") { // a multi-tunnel example, for the default sink
				assert.Equal(t, FromFile, origins[k.name].Kind, "the example sets every key: %s", k.name)
			}
		}
	}
	for _, alias := range []string{"edge-eu", "edge-us", "staging"} {
		assert.Equal(t, FromFile, origins["tunnels."+alias].Kind, alias)
	}

	// What the example promises in its comments.
	r := cfg.Tunnels
	tests := []struct {
		name                string
		namespace, alias    string
		want                route.TunnelRef
		wantRejectionReason string
	}{
		{"class pangolin uses the default tunnel in tunnelNamespace", "shop", "", route.TunnelRef{Namespace: "pangolin-system", Name: "main"}, ""},
		{"class pangolin-edge-eu uses its tunnel in tunnelNamespace", "shop", "edge-eu", route.TunnelRef{Namespace: "pangolin-system", Name: "edge-eu-tunnel"}, ""},
		{"class pangolin-edge-us uses the tunnel in another namespace", "shop", "edge-us", route.TunnelRef{Namespace: "network-us", Name: "edge-us-tunnel"}, ""},
		{"class pangolin-staging serves a listed namespace", "qa", "staging", route.TunnelRef{Namespace: "pangolin-system", Name: "staging-tunnel"}, ""},
		{"class pangolin-staging refuses other namespaces", "shop", "staging", route.TunnelRef{}, pic.ReasonTunnelNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, problem := r.Resolve(tt.namespace, tt.alias, "")
			if tt.wantRejectionReason != "" {
				require.NotNil(t, problem)
				assert.Equal(t, tt.wantRejectionReason, problem.Reason)
				return
			}
			require.Nil(t, problem)
			assert.Equal(t, tt.want, ref)
		})
	}
}

func TestTunnelsSection(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		wantDefault tunnel.Tunnel
		wantAliases map[string]tunnel.Tunnel
	}{
		{
			name:        "an entry may be a name or namespace/name",
			file:        "tunnels:\n  a: tunnel-a\n  b: ns-b/tunnel-b\n",
			wantDefault: tunnel.Tunnel{Name: "default"},
			wantAliases: map[string]tunnel.Tunnel{"a": {Name: "tunnel-a"}, "b": {Namespace: "ns-b", Name: "tunnel-b"}},
		},
		{
			name:        "an object's name defaults to its alias",
			file:        "tunnels:\n  edge:\n    namespace: net\n  open: {}\n",
			wantDefault: tunnel.Tunnel{Name: "default"},
			wantAliases: map[string]tunnel.Tunnel{"edge": {Namespace: "net", Name: "edge"}, "open": {Name: "open"}},
		},
		{
			name:        "an entry with nothing under it names the tunnel after its alias",
			file:        "tunnels:\n  edge:\n",
			wantDefault: tunnel.Tunnel{Name: "default"},
			wantAliases: map[string]tunnel.Tunnel{"edge": {Name: "edge"}},
		},
		{
			name:        "allowed namespaces may be one comma-separated string, as every list",
			file:        "tunnels:\n  edge:\n    allowedNamespaces: shop, blog\n",
			wantDefault: tunnel.Tunnel{Name: "default"},
			wantAliases: map[string]tunnel.Tunnel{"edge": {Name: "edge", AllowedNamespaces: []string{"shop", "blog"}}},
		},
		{
			name:        `"*" allows every namespace`,
			file:        "tunnels:\n  shared:\n    allowedNamespaces: [\"*\"]\n",
			wantDefault: tunnel.Tunnel{Name: "default"},
			wantAliases: map[string]tunnel.Tunnel{"shared": {Name: "shared", AllowedNamespaces: []string{"*"}}},
		},
		{
			name:        "defaultTunnel may be an object with allowed namespaces",
			file:        "defaultTunnel:\n  name: main\n  namespace: pangolin-system\n  allowedNamespaces: [web]\ntunnels:\n",
			wantDefault: tunnel.Tunnel{Name: "main", Namespace: "pangolin-system", AllowedNamespaces: []string{"web"}},
			wantAliases: map[string]tunnel.Tunnel{},
		},
		{
			name:        "YAML anchors and aliases can share a tunnel definition",
			file:        "tunnels:\n  eu: &eu\n    name: eu-tunnel\n    allowedNamespaces: &teams [a, b]\n  eu-backup: *eu\n  us:\n    allowedNamespaces: *teams\n",
			wantDefault: tunnel.Tunnel{Name: "default"},
			wantAliases: map[string]tunnel.Tunnel{
				"eu":        {Name: "eu-tunnel", AllowedNamespaces: []string{"a", "b"}},
				"eu-backup": {Name: "eu-tunnel", AllowedNamespaces: []string{"a", "b"}},
				"us":        {Name: "us", AllowedNamespaces: []string{"a", "b"}},
			},
		},
		{
			name:        `defaultTunnel: "" leaves no default tunnel`,
			file:        "defaultTunnel: \"\"\n",
			wantDefault: tunnel.Tunnel{},
			wantAliases: map[string]tunnel.Tunnel{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := mustLoad(t, []string{"--config", writeConfig(t, tt.file)}, nil)
			assert.Equal(t, tt.wantDefault, cfg.Tunnels.Default)
			assert.Equal(t, tt.wantAliases, cfg.Tunnels.Aliases)
		})
	}
}

func TestInvalidConfiguration(t *testing.T) {
	tests := []struct {
		name    string
		file    string // written to {file} when set
		args    []string
		environ []string
		want    []string // every problem, in order; {file} is the file's path
	}{
		// The example of the brief, word for word.
		{name: "an unknown backend scheme from the environment",
			environ: []string{"PIC_BACKEND_SCHEME=ftp"},
			want:    []string{`backendScheme (PIC_BACKEND_SCHEME) = "ftp": want http or https`}},
		{name: "an unknown backend scheme from a flag names the flag",
			args: []string{"--backend-scheme=HTTPS"},
			want: []string{`backendScheme (--backend-scheme) = "HTTPS": want http or https (did you mean "https"?)`}},
		{name: "an unknown backend scheme from the file names the file and line",
			file: "logLevel: info\nbackendScheme: ftp\n",
			want: []string{`backendScheme (file {file}) = "ftp": want http or https`}},

		// Tunnel class mapping.
		{name: "a mapping line without = is malformed",
			environ: []string{"PIC_TUNNEL_CLASS_MAPPING=edge-eu=edge-eu-tunnel\nedge-us\n"},
			want:    []string{`tunnelClassMapping (PIC_TUNNEL_CLASS_MAPPING) = "edge-us": want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel`}},
		{name: "a mapping entry without a tunnel is malformed",
			args: []string{"--tunnel-class-mapping=a=t,b="},
			want: []string{`tunnelClassMapping (--tunnel-class-mapping) = "b=": want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel`}},
		{name: "a mapping alias that cannot be a class name is refused",
			environ: []string{"PIC_TUNNEL_CLASS_MAPPING=Edge_EU=edge-eu-tunnel"},
			want:    []string{`tunnels.Edge_EU (PIC_TUNNEL_CLASS_MAPPING) = "Edge_EU": invalid alias; want an alias of lowercase letters, digits and '-' (at most 63 characters), since it names the IngressClass pangolin-<alias>`}},
		{name: "a mapping tunnel with two slashes is refused",
			environ: []string{"PIC_TUNNEL_CLASS_MAPPING=edge=a/b/c"},
			want:    []string{`tunnelClassMapping (PIC_TUNNEL_CLASS_MAPPING) = "edge=a/b/c": want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default`}},
		{name: "a mapping tunnel name must be an object name",
			environ: []string{"PIC_TUNNEL_CLASS_MAPPING=edge=Edge_Tunnel"},
			want:    []string{`tunnels.edge (PIC_TUNNEL_CLASS_MAPPING) = "Edge_Tunnel": "Edge_Tunnel" is not a PangolinTunnel name: want lowercase letters, digits, '-' and '.', at most 253 characters`}},
		{name: "a mapping tunnel namespace must be a namespace name",
			environ: []string{"PIC_TUNNEL_CLASS_MAPPING=edge=Net_EU/t"},
			want:    []string{`tunnels.edge (PIC_TUNNEL_CLASS_MAPPING) = "Net_EU/t": "Net_EU" is not a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)`}},
		{name: "an alias mapped twice is refused",
			environ: []string{"PIC_TUNNEL_CLASS_MAPPING=edge=a\nother=b, edge=c"},
			want:    []string{`tunnelClassMapping (PIC_TUNNEL_CLASS_MAPPING) defines alias "edge" twice: keep one`}},
		{name: "an alias in both the tunnels section and the mapping names both",
			file:    "tunnels:\n  edge-eu: eu-tunnel\n",
			environ: []string{"PIC_TUNNEL_CLASS_MAPPING=edge-eu=other-tunnel"},
			want:    []string{`tunnels.edge-eu (file {file}) and tunnelClassMapping (PIC_TUNNEL_CLASS_MAPPING) both define alias "edge-eu": keep one of them`}},
		{name: "a mapping in the file that is not text points to the tunnels section",
			file: "tunnelClassMapping:\n  edge: t\n",
			want: []string{`tunnelClassMapping (file {file}) = {edge: t}: want lines of alias=tunnel (commas also separate entries; blank lines and # comments are ignored); for structured entries use the tunnels section`}},
		{name: "every malformed mapping entry is reported",
			args: []string{"--tunnel-class-mapping=a,b=,c=t"},
			want: []string{
				`tunnelClassMapping (--tunnel-class-mapping) = "a": want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel`,
				`tunnelClassMapping (--tunnel-class-mapping) = "b=": want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel`,
			}},
		{name: "a malformed line of a mapping in the file names the file",
			file: "tunnelClassMapping: |\n  a=t\n  b\n",
			want: []string{`tunnelClassMapping (file {file}) = "b": want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel`}},

		// Durations.
		{name: "a zero resync period",
			environ: []string{"PIC_RESYNC_PERIOD=0s"},
			want:    []string{`resyncPeriod (PIC_RESYNC_PERIOD) = "0s": want a positive Go duration such as 30s, 5m or 1h`}},
		{name: "a negative resync period",
			args: []string{"--resync-period=-5m"},
			want: []string{`resyncPeriod (--resync-period) = "-5m0s": want a positive Go duration such as 30s, 5m or 1h`}},
		{name: "an unparseable resync period",
			environ: []string{"PIC_RESYNC_PERIOD=5 minutes"},
			want:    []string{`resyncPeriod (PIC_RESYNC_PERIOD) = "5 minutes": want a positive Go duration such as 30s, 5m or 1h`}},
		{name: "a resync period without a unit in the file",
			file: "resyncPeriod: 300\n",
			want: []string{`resyncPeriod (file {file}) = 300: want a positive Go duration such as 30s, 5m or 1h`}},

		// Unknown keys in the file.
		{name: "a misspelt key in the file is named, with the key meant",
			file: "defaultTunel: main\n",
			want: []string{`file {file}: unknown key "defaultTunel" (did you mean "defaultTunnel"?)`}},
		{name: "a flag or variable name used as a file key is pointed to the file key",
			file: "logLevel: info\nbackend-scheme: https\nPIC_LOG_FORMAT: json\n",
			want: []string{
				`file {file}: unknown key "backend-scheme" (did you mean "backendScheme"?)`,
				`file {file}: unknown key "PIC_LOG_FORMAT" (did you mean "logFormat"?)`,
			}},
		{name: "an unknown key far from any known one is named alone",
			file: "verbosity: 3\n",
			want: []string{`file {file}: unknown key "verbosity"`}},
		{name: "an unknown nested key names its full path",
			file: "leaderElection:\n  enable: true\n",
			want: []string{`file {file}: unknown key "leaderElection.enable" (did you mean "enabled"?)`}},
		{name: "an unknown key in a tunnel entry",
			file: "tunnels:\n  edge:\n    name: t\n    alowedNamespaces: [a]\n",
			want: []string{`file {file}: unknown key "tunnels.edge.alowedNamespaces" (did you mean "allowedNamespaces"?)`}},
		{name: "unknown keys of several tunnel entries come in the order of their aliases",
			file: "tunnels:\n  edge-b:\n    site: s\n  edge-a:\n    site: s\n  edge-c:\n    site: s\n",
			want: []string{
				`file {file}: unknown key "tunnels.edge-a.site"`,
				`file {file}: unknown key "tunnels.edge-b.site"`,
				`file {file}: unknown key "tunnels.edge-c.site"`,
			}},
		{name: "bad values of several tunnel entries come in the order of their aliases",
			file: "tunnels:\n  edge-b:\n    name: [b]\n  edge-a:\n    name: [a]\n",
			want: []string{
				`tunnels.edge-a.name (file {file}) = [a]: want a PangolinTunnel name`,
				`tunnels.edge-b.name (file {file}) = [b]: want a PangolinTunnel name`,
			}},
		{name: "a group key that is not a mapping",
			file: "leaderElection: true\n",
			want: []string{`leaderElection (file {file}) = true: want a mapping with keys enabled, id, namespace`}},
		{name: "a file that is not a mapping",
			file: "- backendScheme: http\n",
			want: []string{"configuration file {file} is not valid YAML: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[string]interface {}"}},
		{name: "a file that is not YAML",
			file: "backendScheme: [http\n",
			want: []string{`configuration file {file} is not valid YAML: yaml: line 1: did not find expected ',' or ']'`}},
		{name: "a key given twice in the file",
			file: "logLevel: info\nlogLevel: debug\n",
			want: []string{"configuration file {file} is not valid YAML: yaml: unmarshal errors:\n  line 2: mapping key \"logLevel\" already defined at line 1"}},
		{name: "an alias given twice in the tunnels section",
			file: "tunnels:\n  edge: a\n  edge: b\n",
			want: []string{"configuration file {file} is not valid YAML: yaml: unmarshal errors:\n  line 3: mapping key \"edge\" already defined at line 2"}},
		{name: "a configuration file that does not exist",
			environ: []string{"PIC_CONFIG=/nonexistent/pic.yaml"},
			want:    []string{`configuration file (PIC_CONFIG): open /nonexistent/pic.yaml: no such file or directory`}},

		// Sources and namespaces.
		{name: "an unknown source",
			environ: []string{"PIC_SOURCES=ingress,gateway"},
			want:    []string{`sources (PIC_SOURCES) = [ingress, gateway]: unknown source "gateway"; want a comma-separated list of at least one of ingress, httproute`}},
		{name: "a misspelt source gets a suggestion",
			file: "sources: [ingress, httproutes]\n",
			want: []string{`sources (file {file}) = [ingress, httproutes]: unknown source "httproutes" (did you mean "httproute"?); want a comma-separated list of at least one of ingress, httproute`}},
		{name: "no source at all",
			args: []string{"--sources="},
			want: []string{`sources (--sources) = []: no source is chosen; want a comma-separated list of at least one of ingress, httproute`}},
		{name: "a watched namespace that is not a namespace name",
			environ: []string{"PIC_WATCH_NAMESPACES=shop,Kube_System"},
			want:    []string{`watchNamespaces (PIC_WATCH_NAMESPACES) = [shop, Kube_System]: want a comma-separated list of names of lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters, or nothing for all namespaces`}},
		{name: "a list of lists for watched namespaces",
			file: "watchNamespaces: [[a]]\n",
			want: []string{`watchNamespaces (file {file}) = [[a]]: want a comma-separated list of names of lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters, or nothing for all namespaces`}},
		{name: "a Secret namespace that is not a namespace name",
			environ: []string{"PIC_SECRET_NAMESPACES=shop,Kube_System"},
			want:    []string{`secretNamespaces (PIC_SECRET_NAMESPACES) = [shop, Kube_System]: want a comma-separated list of names of lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters, or nothing for every watched namespace`}},
		{name: "a Secret namespace that is not watched",
			environ: []string{"PIC_WATCH_NAMESPACES=shop,blog", "PIC_SECRET_NAMESPACES=shop,qa"},
			want:    []string{`secretNamespaces (PIC_SECRET_NAMESPACES) names qa, which watchNamespaces (PIC_WATCH_NAMESPACES) leaves out: PIC reads no AccessPolicy there; list only watched namespaces`}},
		{name: "a tunnel namespace that is not a namespace name",
			args: []string{"--tunnel-namespace=pangolin.system"},
			want: []string{`tunnelNamespace (--tunnel-namespace) = "pangolin.system": want a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters), or "" for the namespace of each Ingress`}},
		{name: "a leader-election namespace that is not a namespace name",
			environ: []string{"PIC_LEADER_ELECTION_NAMESPACE=-kube"},
			want:    []string{`leaderElection.namespace (PIC_LEADER_ELECTION_NAMESPACE) = "-kube": want a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters), or "" for the controller's own namespace`}},

		// Bools and numbers.
		{name: "a bool variable that is neither true nor false",
			environ: []string{"PIC_DEFAULT_SSO=maybe"},
			want:    []string{`defaultSSO (PIC_DEFAULT_SSO) = "maybe": want true or false`}},
		{name: "a bool flag that is neither true nor false",
			args: []string{"--leader-elect=yes"},
			want: []string{`leaderElection.enabled (--leader-elect) = "yes": want true or false`}},
		{name: "a quoted yes in the file is not a bool",
			file: "defaultBlockAccess: \"yes\"\n",
			want: []string{`defaultBlockAccess (file {file}) = "yes": want true or false`}},
		{name: "zero concurrent reconciles",
			environ: []string{"PIC_MAX_CONCURRENT_RECONCILES=0"},
			want:    []string{`maxConcurrentReconciles (PIC_MAX_CONCURRENT_RECONCILES) = 0: want a whole number of at least 1`}},
		{name: "concurrent reconciles in words",
			environ: []string{"PIC_MAX_CONCURRENT_RECONCILES=four"},
			want:    []string{`maxConcurrentReconciles (PIC_MAX_CONCURRENT_RECONCILES) = "four": want a whole number of at least 1`}},
		{name: "a fractional number of concurrent reconciles",
			file: "maxConcurrentReconciles: 2.5\n",
			want: []string{`maxConcurrentReconciles (file {file}) = 2.5: want a whole number of at least 1`}},
		{name: "a zero QPS",
			args: []string{"--kube-api-qps=0"},
			want: []string{`kubeAPIQPS (--kube-api-qps) = 0: want -1 (no client-side limit) or a number greater than 0, such as 50`}},
		{name: "a QPS that is not a number",
			environ: []string{"PIC_KUBE_API_QPS=fast"},
			want:    []string{`kubeAPIQPS (PIC_KUBE_API_QPS) = "fast": want -1 (no client-side limit) or a number greater than 0, such as 50`}},
		{name: "a QPS that is not finite",
			environ: []string{"PIC_KUBE_API_QPS=+Inf"},
			want:    []string{`kubeAPIQPS (PIC_KUBE_API_QPS) = .inf: want -1 (no client-side limit) or a number greater than 0, such as 50`}},
		{name: "a negative burst",
			file: "kubeAPIBurst: -1\n",
			want: []string{`kubeAPIBurst (file {file}) = -1: want a whole number of at least 1`}},

		// Addresses, names, logging.
		{name: "a metrics address without a port",
			environ: []string{"PIC_METRICS_BIND_ADDRESS=8080"},
			want:    []string{`metricsBindAddress (PIC_METRICS_BIND_ADDRESS) = "8080": want host:port or :port, such as :8080, or "0" to disable`}},
		{name: "a health address with a port out of range",
			args: []string{"--health-probe-bind-address=:70000"},
			want: []string{`healthProbeBindAddress (--health-probe-bind-address) = ":70000": want host:port or :port, such as :8080, or "0" to disable`}},
		{name: "a cluster domain that is not a DNS name",
			environ: []string{"PIC_CLUSTER_DOMAIN=cluster_local"},
			want:    []string{`clusterDomain (PIC_CLUSTER_DOMAIN) = "cluster_local": want a DNS name such as cluster.local`}},
		{name: "a load-balancer class that is not a qualified name",
			args: []string{"--load-balancer-class=pangolin.io/tunnel/tcp"},
			want: []string{`loadBalancerClass (--load-balancer-class) = "pangolin.io/tunnel/tcp": want a qualified name such as pangolin.io/tunnel: an optional DNS prefix and '/', then letters, digits, '-', '_' and '.'`}},
		{name: "a load-balancer address that is neither a DNS name nor an IP",
			environ: []string{"PIC_LOAD_BALANCER_ADDRESS=https://pangolin.example.com"},
			want:    []string{`loadBalancerAddress (PIC_LOAD_BALANCER_ADDRESS) = "https://pangolin.example.com": want a DNS name such as pangolin.example.com or an IP address, or "" for the host of pangolin.url`}},
		{name: "a leader-election id that is not a Lease name",
			args: []string{"--leader-election-id=PIC Lease"},
			want: []string{`leaderElection.id (--leader-election-id) = "PIC Lease": want a Lease name: lowercase letters, digits, '-' and '.', at most 253 characters`}},
		{name: "an unknown log level gets a suggestion",
			environ: []string{"PIC_LOG_LEVEL=warning"},
			want:    []string{`logLevel (PIC_LOG_LEVEL) = "warning": want debug, info, warn or error (did you mean "warn"?)`}},
		{name: "an unknown log format",
			file: "logFormat: text\n",
			want: []string{`logFormat (file {file}) = "text": want json or console`}},

		// Tunnels.
		{name: "a default tunnel with too many slashes",
			environ: []string{"PIC_DEFAULT_TUNNEL_NAME=a/b/c"},
			want:    []string{`defaultTunnel (PIC_DEFAULT_TUNNEL_NAME) = "a/b/c": want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default, or a mapping with name, namespace and allowedNamespaces, or "" for no default tunnel`}},
		{name: "a default tunnel with an empty namespace",
			environ: []string{"PANGOLIN_DEFAULT_TUNNEL_NAME=/main"},
			want:    []string{`defaultTunnel (PANGOLIN_DEFAULT_TUNNEL_NAME) = "/main": want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default, or a mapping with name, namespace and allowedNamespaces, or "" for no default tunnel`}},
		{name: "a default tunnel object without a name",
			file: "defaultTunnel:\n  namespace: pangolin-system\n",
			want: []string{`defaultTunnel (file {file}) = "pangolin-system/": the tunnel name is missing; want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default`}},
		{name: "a default tunnel given as a list",
			file: "defaultTunnel: [a, b]\n",
			want: []string{`defaultTunnel (file {file}) = [a, b]: want a PangolinTunnel name or namespace/name, such as default or pangolin-system/default, or a mapping with name, namespace and allowedNamespaces, or "" for no default tunnel`}},
		{name: "a tunnels section that is a list",
			file: "tunnels:\n  - edge\n",
			want: []string{`tunnels (file {file}) = [edge]: want a mapping of alias to a tunnel name, namespace/name, or {name, namespace, allowedNamespaces}`}},
		{name: "a tunnels alias that cannot be a class name",
			file: "tunnels:\n  Edge_EU: t\n",
			want: []string{`tunnels.edge_eu (file {file}) = "edge_eu": invalid alias; want an alias of lowercase letters, digits and '-' (at most 63 characters), since it names the IngressClass pangolin-<alias>`}},
		{name: "a tunnel object name holding a namespace",
			file: "tunnels:\n  edge:\n    name: net/edge\n",
			want: []string{`tunnels.edge (file {file}) = "net/edge": the tunnel name contains '/'; give the namespace as namespace`}},
		{name: "a tunnel object name that is not an object name",
			file: "tunnels:\n  edge:\n    name: Edge Tunnel\n",
			want: []string{`tunnels.edge (file {file}) = "Edge Tunnel": "Edge Tunnel" is not a PangolinTunnel name: want lowercase letters, digits, '-' and '.', at most 253 characters`}},
		{name: "a tunnel object name that is not text",
			file: "tunnels:\n  edge:\n    name: [a]\n",
			want: []string{`tunnels.edge.name (file {file}) = [a]: want a PangolinTunnel name`}},
		{name: "a tunnel object namespace that is not a namespace name",
			file: "tunnels:\n  edge:\n    namespace: Net\n",
			want: []string{`tunnels.edge (file {file}) = "Net/edge": "Net" is not a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)`}},
		{name: "allowed namespaces that are an empty list",
			file: "tunnels:\n  edge:\n    allowedNamespaces: []\n",
			want: []string{`tunnels.edge (file {file}) = "edge": allowedNamespaces is empty, which would allow every namespace; list the namespaces, or write ["*"] to allow all`}},
		{name: "allowed namespaces with a bad name",
			file: "tunnels:\n  edge:\n    allowedNamespaces: [shop, Blog]\n",
			want: []string{`tunnels.edge (file {file}) = "edge": "Blog" is not a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters); want a list of namespace names, such as [shop, blog], or ["*"] for all namespaces`}},
		{name: "allowed namespaces with an empty item",
			file: "tunnels:\n  edge:\n    allowedNamespaces: [shop, ~]\n",
			want: []string{`tunnels.edge (file {file}) = "edge": "" is not a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters); want a list of namespace names, such as [shop, blog], or ["*"] for all namespaces`}},

		// The environment and the command line.
		{name: "a misspelt PIC_ variable is not ignored",
			environ: []string{"PIC_LOG_LEVLE=debug"},
			want:    []string{`environment variable PIC_LOG_LEVLE is not a setting (did you mean PIC_LOG_LEVEL?)`}},
		{name: "--print-config that is neither true nor false",
			args: []string{"--print-config=maybe"},
			want: []string{`--print-config = "maybe": want true or false`}},

		// All at once.
		{name: "every problem is reported at once, in the order of the keys",
			file:    "logFormat: text\ndefaultTunel: x\n",
			args:    []string{"--resync-period=0"},
			environ: []string{"PIC_DEFAULT_SSO=maybe", "PIC_BACKEND_SCHEME=ftp"},
			want: []string{
				`file {file}: unknown key "defaultTunel" (did you mean "defaultTunnel"?)`,
				`backendScheme (PIC_BACKEND_SCHEME) = "ftp": want http or https`,
				`defaultSSO (PIC_DEFAULT_SSO) = "maybe": want true or false`,
				`resyncPeriod (--resync-period) = "0s": want a positive Go duration such as 30s, 5m or 1h`,
				`logFormat (file {file}) = "text": want json or console`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
				args = append([]string{"--config", path}, args...)
			}
			cfg, origins, err := loadWith(t, args, tt.environ, &bytes.Buffer{})
			require.Error(t, err)
			assert.Nil(t, cfg)
			assert.Nil(t, origins)
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "{file}", path)
			}
			assert.Equal(t, want, problemsOf(t, err))
		})
	}
}

// TestUnknownFileKeys: viper keeps keys in lower case, but a message names an unknown
// key as the file writes it, with the key meant when one is plausibly meant.
func TestUnknownFileKeys(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // every problem, in order; {file} is the file's path
	}{
		// Spelling.
		{name: "a top-level key keeps the case the file writes it in",
			file: "defaultTunelName: x\n",
			want: []string{`file {file}: unknown key "defaultTunelName" (did you mean "defaultTunnel"?)`}},
		{name: "a key in a group keeps the case of the group and of the key",
			file: "LeaderElection:\n  Enable: true\n",
			want: []string{`file {file}: unknown key "LeaderElection.Enable" (did you mean "enabled"?)`}},
		{name: "a key in a tunnel entry keeps the case of the section, the alias and the key",
			file: "tunnels:\n  foo:\n    siteNmae: x\n  Edge:\n    allowedNamespace: [shop]\n",
			want: []string{
				`file {file}: unknown key "tunnels.Edge.allowedNamespace" (did you mean "allowedNamespaces"?)`,
				`file {file}: unknown key "tunnels.foo.siteNmae"`,
			}},
		{name: "a key in the default tunnel keeps its case",
			file: "defaultTunnel:\n  name: main\n  nameSpace2: net\n",
			want: []string{`file {file}: unknown key "defaultTunnel.nameSpace2" (did you mean "namespace"?)`}},
		{name: "a key written with a dot is named as written",
			file: "leaderElection.Enable: true\n",
			want: []string{`file {file}: unknown key "leaderElection.Enable" (did you mean "enabled"?)`}},
		{name: "a key written in two cases is named in both",
			file: "Verbosity: 1\nverbosity: 2\n",
			want: []string{
				`file {file}: unknown key "Verbosity"`,
				`file {file}: unknown key "verbosity"`,
			}},
		{name: "a key that is not text is named as YAML writes it",
			file: "8080: metrics\n",
			want: []string{`file {file}: unknown key "8080"`}},

		// Suggestions.
		{name: "a key with the Name of its variable gets the key meant",
			file: "defaultTunnelName: main\n",
			want: []string{`file {file}: unknown key "defaultTunnelName" (did you mean "defaultTunnel"?)`}},
		{name: "a key far from every known one gets no suggestion",
			file: "siteName: x\n",
			want: []string{`file {file}: unknown key "siteName"`}},
		{name: "a key that begins two known keys equally gets no suggestion",
			file: "kubeAPI: 50\n",
			want: []string{`file {file}: unknown key "kubeAPI"`}},
		{name: "a key as near to three known keys gets no suggestion",
			file: "defaultName: x\n",
			want: []string{`file {file}: unknown key "defaultName"`}},
		{name: "a misspelt key is nearer than a shorter key that begins it",
			file: "tunnels:\n  edge:\n    namespce: net\n",
			want: []string{`file {file}: unknown key "tunnels.edge.namespce" (did you mean "namespace"?)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.file)
			cfg, _, err := loadWith(t, []string{"--config", path}, nil, io.Discard)
			require.Error(t, err)
			assert.Nil(t, cfg)
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "{file}", path)
			}
			assert.Equal(t, want, problemsOf(t, err))
		})
	}
	t.Run("the unknown key stops start-up with the key as written and the key meant", func(t *testing.T) {
		path := writeConfig(t, "defaultTunelName: x\n")
		_, _, err := loadWith(t, []string{"--config", path}, nil, io.Discard)
		assert.EqualError(t, err, `invalid configuration: file `+path+`: unknown key "defaultTunelName" (did you mean "defaultTunnel"?)`)
	})
}

func TestErrorText(t *testing.T) {
	t.Run("one problem reads as one line", func(t *testing.T) {
		_, _, err := loadWith(t, nil, []string{"PIC_BACKEND_SCHEME=ftp"}, io.Discard)
		assert.EqualError(t, err, `invalid configuration: backendScheme (PIC_BACKEND_SCHEME) = "ftp": want http or https`)
	})
	t.Run("several problems read one per line", func(t *testing.T) {
		_, _, err := loadWith(t, nil, []string{"PIC_BACKEND_SCHEME=ftp", "PIC_LOG_FORMAT=text"}, io.Discard)
		assert.EqualError(t, err, "invalid configuration (2 problems):\n"+
			`  backendScheme (PIC_BACKEND_SCHEME) = "ftp": want http or https`+"\n"+
			`  logFormat (PIC_LOG_FORMAT) = "text": want json or console`)
	})
}

func TestCommandLine(t *testing.T) {
	t.Run("--help prints the usage with every flag, variable and file key", func(t *testing.T) {
		var out bytes.Buffer
		cfg, _, err := loadWith(t, []string{"--help"}, nil, &out)
		assert.ErrorIs(t, err, pflag.ErrHelp)
		assert.Nil(t, cfg)
		for _, k := range keys {
			if k.flag != "" {
				assert.Regexp(t, "--"+k.flag+"[ \\[]", out.String())
				assert.Contains(t, out.String(), "file key "+k.name+"]")
				assert.Contains(t, out.String(), "env "+k.env[0])
			}
		}
		assert.Contains(t, out.String(), "--config string")
		assert.Contains(t, out.String(), "--print-config")
		assert.Contains(t, out.String(), `(default 5m0s)`)
	})
	t.Run("-h is --help", func(t *testing.T) {
		_, _, err := loadWith(t, []string{"-h"}, nil, &bytes.Buffer{})
		assert.ErrorIs(t, err, pflag.ErrHelp)
	})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown flag gets the nearest flag", []string{"--backend-schem=http"},
			"invalid command line: unknown flag: --backend-schem; did you mean --backend-scheme? (see --help)"},
		{"an unknown flag far from any gets no guess", []string{"--frobnicate"},
			"invalid command line: unknown flag: --frobnicate (see --help)"},
		{"a flag without its value", []string{"--log-level"},
			"invalid command line: flag needs an argument: --log-level (see --help)"},
		{"an argument that is not a flag", []string{"--log-level", "debug", "start"},
			`invalid command line: unexpected argument "start": only flags are accepted (see --help)`},
		{"a bool flag's value after a space is an argument", []string{"--leader-elect", "false"},
			`invalid command line: unexpected argument "false": only flags are accepted (see --help)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			_, _, err := loadWith(t, tt.args, nil, &out)
			assert.EqualError(t, err, tt.want)
			assert.Empty(t, out.String(), "the caller prints the error")
		})
	}
}

func TestEnvironmentNamesThatAreNotTypos(t *testing.T) {
	cfg, _ := mustLoad(t, nil, []string{
		"PIC_SERVICE_HOST=10.0.0.1",           // a Service named pic
		"PIC_SERVICE_PORT_METRICS=8080",       // ... with a named port
		"PIC_PORT=tcp://10.0.0.1:8080",        //
		"PIC_PORT_8080_TCP_ADDR=10.0.0.1",     //
		"PIC_METRICS_SERVICE_HOST=10.0.0.2",   // a Service named pic-metrics
		"PIC_SOMETHING_ELSE_ENTIRELY=1",       // not near any setting
		"PANGOLIN_ORGANIZATION=acme",          // another program's variable
		"KUBECONFIG=/home/me/.kube/config",    // client-go's business
		"PIC_LOG_LEVEL=debug",                 //
		"PIC_CONFIG=",                         // empty: no file
		"PANGOLIN_DEFAULT_TUNNEL_NAME_X=typo", // not PIC_: left alone
	})
	assert.Equal(t, "debug", cfg.LogLevel)
	assert.Empty(t, cfg.Kubeconfig, "KUBECONFIG is left to client-go")
}

func TestPrint(t *testing.T) {
	path := writeConfig(t, `
tunnelNamespace: pangolin-system
tunnels:
  staging:
    name: staging-tunnel
    allowedNamespaces: [qa]
  edge-us: network-us/edge-us-tunnel
logLevel: debug
`)
	cfg, origins := mustLoad(t,
		[]string{"--config", path, "--resync-period=90s", "--print-config", "--kube-api-qps=0.1"},
		[]string{"PIC_BACKEND_SCHEME=https", "PIC_TUNNEL_CLASS_MAPPING=edge-eu=edge-eu-tunnel", "PIC_WATCH_NAMESPACES=shop,qa"})
	var out bytes.Buffer
	require.NoError(t, Print(&out, cfg, origins))
	text := out.String()

	// Every line with an origin, its value and its origin; columns are aligned.
	lines := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if value, origin, ok := strings.Cut(line, "# "); ok && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			lines[strings.TrimRight(value, " ")] = origin
		}
	}
	assert.Equal(t, map[string]string{
		"defaultTunnel: default":                                     "default",
		"tunnelNamespace: pangolin-system":                           "file " + path,
		"onlyListedTunnels: false":                                   "default",
		"  edge-eu: edge-eu-tunnel":                                  "env PIC_TUNNEL_CLASS_MAPPING",
		"  edge-us: network-us/edge-us-tunnel":                       "file " + path,
		"  staging: {name: staging-tunnel, allowedNamespaces: [qa]}": "file " + path,
		"backendScheme: https":                                       "env PIC_BACKEND_SCHEME",
		"clusterDomain: cluster.local":                               "default",
		"defaultSSO: true":                                           "default",
		"defaultBlockAccess: false":                                  "default",
		"loadBalancerClass: pangolin.io/tunnel":                      "default",
		`loadBalancerAddress: ""`:                                    "default",
		"healthChecks: false":                                        "default",
		"hostPolicy: []":                                             "default",
		"sources: [ingress]":                                         "default",
		"sink: pangolinresource":                                     "default",
		`  url: ""`:                                                  "default",
		`  org: ""`:                                                  "default",
		`  apiKeyFile: ""`:                                           "default",
		"  ownerId: default":                                         "default",
		`  caFile: ""`:                                               "default",
		"  driftPeriod: 1h":                                          "default",
		"  maxConcurrentReads: 4":                                    "default",
		"  newtImage: " + DefaultNewtImage:                           "default",
		"  newtReplicas: 1":                                          "default",
		"  newtCPURequest: 10m":                                      "default",
		"  newtMemoryRequest: 32Mi":                                  "default",
		"  newtCPULimit: \"\"":                                       "default",
		"  newtMemoryLimit: 128Mi":                                   "default",
		`  newtEndpoint: ""`:                                         "default",
		"  newtOwner: pangolin-ingress-controller":                   "default",
		"watchNamespaces: [shop, qa]":                                "env PIC_WATCH_NAMESPACES",
		"secretNamespaces: []":                                       "default",
		"resyncPeriod: 1m30s":                                        "flag --resync-period",
		"maxConcurrentReconciles: 4":                                 "default",
		`kubeconfig: ""`:                                             "default",
		"kubeAPIQPS: 0.1":                                            "flag --kube-api-qps",
		"kubeAPIBurst: 100":                                          "default",
		"metricsBindAddress: :8080":                                  "default",
		"healthProbeBindAddress: :8081":                              "default",
		`pprofBindAddress: "0"`:                                      "default",
		"  enabled: false":                                           "default",
		"  id: pangolin-ingress-controller":                          "default",
		`  namespace: ""`:                                            "default",
		"logLevel: debug":                                            "file " + path,
		"logFormat: json":                                            "default",
	}, lines)
	assert.Contains(t, text, "tunnels:\n")
	assert.Contains(t, text, "leaderElection:\n")
	assert.NotContains(t, text, "printConfig", "--print-config is not part of the configuration")
	assert.NotContains(t, text, "tunnelClassMapping", "the mapping's aliases are shown under tunnels")
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "  # "); i > 0 && len(line[:i]) <= 40 {
			assert.Equal(t, 40, i, "short values have their comments in one column: %q", line)
		}
	}

	t.Run("what it prints loads back as the same configuration", func(t *testing.T) {
		again, _ := mustLoad(t, []string{"--config", writeConfig(t, text)}, nil)
		cfg.PrintConfig = false
		assert.Equal(t, cfg, again)
	})
	t.Run("the multi-tunnel example prints and loads back the same", func(t *testing.T) {
		example, origins := mustLoad(t, []string{"--config", "testdata/multi-tunnel.yaml"}, nil)
		var out bytes.Buffer
		require.NoError(t, Print(&out, example, origins))
		again, _ := mustLoad(t, []string{"--config", writeConfig(t, out.String())}, nil)
		assert.Equal(t, example, again)
	})
	t.Run("without origins it prints no comments", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, Print(&out, Default(), nil))
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				assert.NotContains(t, line, "#")
			}
		}
		assert.Contains(t, out.String(), "tunnels: {}\n")
	})
	t.Run("a default tunnel with allowed namespaces prints as an object", func(t *testing.T) {
		c := Default()
		c.Tunnels.Default = tunnel.Tunnel{Name: "main", Namespace: "pangolin-system", AllowedNamespaces: []string{"web", "*"}}
		var out bytes.Buffer
		require.NoError(t, Print(&out, c, nil))
		assert.Contains(t, out.String(), "defaultTunnel: {name: main, namespace: pangolin-system, allowedNamespaces: [web, '*']}\n")
		again, _ := mustLoad(t, []string{"--config", writeConfig(t, out.String())}, nil)
		assert.Equal(t, c, again)
	})
	t.Run("the API key is never printed, only whether it is set and where from", func(t *testing.T) {
		c := Default()
		c.Pangolin.APIKey = testAPIKey
		var out bytes.Buffer
		require.NoError(t, Print(&out, c, nil))
		assert.NotContains(t, out.String(), testAPIKey)
		assert.Contains(t, out.String(), "  # apiKey ("+EnvAPIKey+" or apiKeyFile): (set, from env "+EnvAPIKey+")\n")
	})
	t.Run("a failing writer fails Print", func(t *testing.T) {
		assert.Error(t, Print(failingWriter{}, Default(), nil))
	})
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestSuggestions(t *testing.T) {
	known := []string{"defaultTunnel", "backendScheme", "logLevel"}
	tests := []struct{ in, want string }{
		{"defaultTunel", "defaultTunnel"},
		{"default-tunnel", "defaultTunnel"},
		{"PIC_BACKEND_SCHEME", "backendScheme"},
		{"loglevel", "logLevel"},
		{"lvl", ""},
		{"completelyDifferent", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in+" suggests "+tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, closest(tt.in, known))
		})
	}
}

// TestSuggestionChoice: at most one suggestion, the nearest, and none when two known
// names are equally near. Flags and variables are suggested the same way as file keys.
func TestSuggestionChoice(t *testing.T) {
	var variables, flags []string
	for _, k := range keys {
		variables = append(variables, k.env...)
		if k.flag != "" {
			flags = append(flags, k.flag)
		}
	}
	tests := []struct {
		name  string
		typed string
		known []string
		want  string
	}{
		{name: "a key with Name and a typo is its key without them",
			typed: "defaultTunelName", known: children(""), want: "defaultTunnel"},
		{name: "a variable with one typo is that variable rather than a shorter one it begins with",
			typed: "PIC_LEADER_ELECTION_NAMESACE", known: variables, want: "PIC_LEADER_ELECTION_NAMESPACE"},
		{name: "a variable with a letter missing is that variable rather than a shorter one it begins with",
			typed: "PIC_PANGOLIN_API_KEY_FIL", known: variables, want: "PIC_PANGOLIN_API_KEY_FILE"},
		{name: "a variable that begins two variables equally gets no suggestion",
			typed: "PIC_LOG", known: variables, want: ""},
		{name: "a flag that begins two flags equally gets no suggestion",
			typed: "kube-api", known: flags, want: ""},
		{name: "a flag with one letter missing gets its flag",
			typed: "metrics-bind-addrss", known: flags, want: "metrics-bind-address"},
		{name: "a name far from all gets no suggestion",
			typed: "frobnicate", known: children(""), want: ""},
		{name: "a name listed twice is one suggestion",
			typed: "loglevle", known: []string{"logLevel", "logLevel"}, want: "logLevel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, closest(tt.typed, tt.known))
		})
	}
}

func TestOriginText(t *testing.T) {
	tests := []struct {
		origin Origin
		text   string
	}{
		{Origin{Kind: FromDefault}, "default"},
		{Origin{Kind: FromFile, Name: "/etc/pic/config.yaml"}, "file /etc/pic/config.yaml"},
		{Origin{Kind: FromEnv, Name: "PIC_LOG_LEVEL"}, "env PIC_LOG_LEVEL"},
		{Origin{Kind: FromFlag, Name: "--log-level"}, "flag --log-level"},
		{Origin{}, "unknown"},
	}
	for _, tt := range tests {
		t.Run("an origin reads "+tt.text, func(t *testing.T) {
			assert.Equal(t, tt.text, tt.origin.String())
		})
	}
}

// TestLoadOffline: render reads a direct-mode configuration where neither its Secret nor
// its CA bundle is mounted, and without Pangolin's address; everything else is checked
// as Load checks it.
func TestLoadOffline(t *testing.T) {
	args := []string{"--sink=pangolin", "--pangolin-api-key-file=/nonexistent/api-key", "--pangolin-ca-file=/nonexistent/ca.crt", "--pangolin-owner-id=prod"}
	// loadWith clears PIC_* and PANGOLIN_* for the rest of the test.
	_, _, err := loadWith(t, args, nil, io.Discard)
	require.Error(t, err, "Load needs what reaching Pangolin needs")

	cfg, _, err := LoadOffline(args, testPlugins)
	require.NoError(t, err)
	assert.Equal(t, "pangolin", cfg.Sink)
	assert.Equal(t, "prod", cfg.Pangolin.OwnerID)
	assert.Empty(t, cfg.Pangolin.APIKey, "the key is not read")

	_, _, err = LoadOffline([]string{"--sink=pangolin", "--pangolin-owner-id=Not_Valid"}, testPlugins)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pangolin.ownerId", "the other keys are checked as ever")
}

func TestHostPolicy(t *testing.T) {
	t.Run("it is off by default", func(t *testing.T) {
		cfg, _ := mustLoad(t, nil, nil)
		assert.False(t, cfg.HostPolicy.Enabled())
	})
	t.Run("the file gives rules by names and by labels", func(t *testing.T) {
		cfg, _ := mustLoad(t, []string{"--config", writeConfig(t, `hostPolicy:
  - namespaces: [team-a]
    hosts: ["*.team-a.example.com"]
  - namespaceSelector: tenant=shop
    hosts: [shop.example.com]
`)}, nil)
		assert.Equal(t, hostpolicy.Policy{
			{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}},
			{NamespaceSelector: "tenant=shop", Hosts: []string{"shop.example.com"}},
		}, cfg.HostPolicy)
	})
	t.Run("a bad rule is named by its index, with the fix", func(t *testing.T) {
		path := writeConfig(t, "hostPolicy:\n  - namespaces: [team-a]\n    hosts: [\"*.com\"]\n  - hosts: [shop.example.com]\n")
		_, _, err := loadWith(t, []string{"--config", path}, nil, io.Discard)
		assert.Equal(t, []string{
			`hostPolicy[0].hosts[0] (file ` + path + `): "*.com" allows every host under "com": want a wildcard over a domain, such as *.team-a.example.com`,
			`hostPolicy[1] (file ` + path + `): the rule selects no namespace: set namespaces (a list of names) or namespaceSelector (a label selector such as tenant=shop)`,
		}, problemsOf(t, err))
	})
	t.Run("ports are read as written, numbers or ranges", func(t *testing.T) {
		cfg, _ := mustLoad(t, []string{"--config", writeConfig(t, "hostPolicy:\n  - namespaces: [team-a]\n    ports: [5432, 45000-45099/udp]\n")}, nil)
		assert.Equal(t, hostpolicy.Policy{{Namespaces: []string{"team-a"}, Ports: []string{"5432", "45000-45099/udp"}}}, cfg.HostPolicy)
	})
	t.Run("a bad port is named by its index, with the fix", func(t *testing.T) {
		path := writeConfig(t, "hostPolicy:\n  - namespaces: [team-a]\n    ports: [5432/sctp]\n")
		_, _, err := loadWith(t, []string{"--config", path}, nil, io.Discard)
		assert.Equal(t, []string{
			`hostPolicy[0].ports[0] (file ` + path + `): "5432/sctp" is not a port pattern: want a port from 1 to 65535 or a range of them, optionally for one protocol, such as 5432, 5432/tcp or 45000-45999/udp`,
		}, problemsOf(t, err))
	})
	t.Run("an unknown key of a rule is refused", func(t *testing.T) {
		_, _, err := loadWith(t, []string{"--config", writeConfig(t, "hostPolicy:\n  - namespace: [team-a]\n    hosts: [a.example.com]\n")}, nil, io.Discard)
		require.Error(t, err)
		assert.Contains(t, strings.Join(problemsOf(t, err), "\n"), "namespace")
	})
	t.Run("print-config shows the rules", func(t *testing.T) {
		cfg, origins := mustLoad(t, []string{"--config", writeConfig(t, "hostPolicy:\n  - namespaces: [team-a]\n    hosts: [\"*.team-a.example.com\"]\n")}, nil)
		var out bytes.Buffer
		require.NoError(t, Print(&out, cfg, origins))
		assert.Contains(t, out.String(), "hostPolicy: [{namespaces: [team-a], hosts: ['*.team-a.example.com']}]")
	})
}
