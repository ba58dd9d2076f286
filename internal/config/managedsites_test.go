package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// directEnv is what direct mode needs, so that a test's problems are its own.
var directEnv = []string{"PIC_SINK=pangolin", "PIC_PANGOLIN_URL=https://pangolin.example.com/v1", "PIC_PANGOLIN_ORG=acme", EnvAPIKey + "=" + testAPIKey}

func TestManagedSites(t *testing.T) {
	cases := []struct {
		name     string
		file     string
		environ  []string
		want     []string
		endpoint string
	}{
		{
			name:     "no tunnel asks for a managed site by default",
			file:     "tunnels:\n  edge: edge\n",
			environ:  directEnv,
			endpoint: "https://pangolin.example.com",
		},
		{
			name:     "the default tunnel and an alias ask for managed sites",
			file:     "defaultTunnel:\n  name: main\n  managedSite: true\ntunnels:\n  edge:\n    managedSite: true\n  other: other\n",
			environ:  directEnv,
			want:     []string{"edge", "main"},
			endpoint: "https://pangolin.example.com",
		},
		{
			name:     "two aliases of one managed tunnel name one site",
			file:     "tunnels:\n  a:\n    name: edge\n    managedSite: true\n  b:\n    name: edge\n    managedSite: true\n",
			environ:  append(directEnv[:len(directEnv):len(directEnv)], "PIC_PANGOLIN_NEWT_ENDPOINT=https://dash.example.com"),
			want:     []string{"edge"},
			endpoint: "https://dash.example.com",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--config", writeConfig(t, tc.file)}
			cfg, origins := mustLoad(t, args, tc.environ)
			assert.Equal(t, tc.want, cfg.ManagedSites())
			assert.Equal(t, tc.endpoint, cfg.Pangolin.NewtEndpointURL())
			var printed bytes.Buffer
			require.NoError(t, Print(&printed, cfg, origins))
			assert.Equal(t, len(tc.want) > 0, strings.Contains(printed.String(), "managedSite: true"), "--print-config shows managed tunnels:\n%s", printed.String())
		})
	}
}

func TestInvalidManagedSites(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		environ []string
		want    string // the start of the only problem, {file} for the file's path
	}{
		{
			name: "a managed site outside direct mode is refused",
			file: "tunnels:\n  edge:\n    managedSite: true\n",
			want: "tunnels.edge.managedSite (file {file}) is true but sink is pangolinresource: PIC creates a site only in direct mode; set sink: pangolin, or remove managedSite",
		},
		{
			name:    "a managed tunnel name with a dot is refused",
			file:    "defaultTunnel:\n  name: edge.eu\n  managedSite: true\n",
			environ: directEnv,
			want:    `defaultTunnel.managedSite (file {file}): the tunnel name "edge.eu" cannot name a managed site: want at most 58 lowercase letters, digits and '-' (no '.')`,
		},
		{
			name:    "a managed tunnel name too long for its Deployment is refused",
			file:    "tunnels:\n  edge:\n    name: " + strings.Repeat("a", 59) + "\n    managedSite: true\n",
			environ: directEnv,
			want:    `tunnels.edge.managedSite (file {file}): the tunnel name "` + strings.Repeat("a", 59) + `" cannot name a managed site`,
		},
		{
			name:    "managedSite that is not a boolean is refused",
			file:    "tunnels:\n  edge:\n    managedSite: sometimes\n",
			environ: directEnv,
			want:    "tunnels.edge",
		},
		{
			name:    "an image without a tag or digest is refused",
			file:    "pangolin:\n  newtImage: fosrl/newt\n",
			environ: directEnv,
			want:    `pangolin.newtImage (file {file}) = "fosrl/newt": want an image reference such as docker.io/fosrl/newt:1.15.0, optionally followed by @sha256:<digest>`,
		},
		{
			name:    "a resource that is not a quantity is refused",
			file:    "pangolin:\n  newtMemoryLimit: lots\n",
			environ: directEnv,
			want:    `pangolin.newtMemoryLimit (file {file}) = "lots": want a positive Kubernetes quantity such as 50m, 0.5, 64Mi or 1Gi, or "" for none`,
		},
		{
			name:    "a zero request is refused",
			environ: append(directEnv[:len(directEnv):len(directEnv)], "PIC_PANGOLIN_NEWT_CPU_REQUEST=0"),
			want:    `pangolin.newtCPURequest (PIC_PANGOLIN_NEWT_CPU_REQUEST) = "0": want a positive Kubernetes quantity`,
		},
		{
			name:    "a request above its limit is refused, naming both",
			file:    "pangolin:\n  newtMemoryRequest: 256Mi\n",
			environ: directEnv,
			want:    `pangolin.newtMemoryRequest (file {file}) = "256Mi" is above pangolin.newtMemoryLimit (default) = "128Mi": the API server refuses a memory request above its limit`,
		},
		{
			name:    "no Newt replica is refused",
			file:    "pangolin:\n  newtReplicas: 0\n",
			environ: directEnv,
			want:    "pangolin.newtReplicas (file {file}) = 0: want a whole number of at least 1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file)
			_, _, err := loadWith(t, []string{"--config", path}, tc.environ, &bytes.Buffer{})
			require.Error(t, err)
			problems := problemsOf(t, err)
			require.Len(t, problems, 1, "%q", problems)
			assert.True(t, strings.HasPrefix(problems[0], strings.ReplaceAll(tc.want, "{file}", path)), "%s", problems[0])
		})
	}
}

func TestImageReferences(t *testing.T) {
	cases := []struct {
		image string
		ok    bool
	}{
		{"docker.io/fosrl/newt:1.15.0", true},
		{"fosrl/newt:1.15.0", true},
		{"registry.example:5000/mirror/newt:1.15.0", true},
		{"fosrl/newt@sha256:" + strings.Repeat("0f", 32), true},
		{"fosrl/newt:1.15.0@sha256:" + strings.Repeat("0f", 32), true},
		{"fosrl/newt", false},
		{"registry.example:5000/newt", false},
		{"fosrl/newt:1.15.0@sha256:short", false},
		{"Fosrl/Newt:1.15.0", false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.ok, isImage(tc.image), tc.image)
	}
}

func TestNewtResources(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		environ []string
		want    [4]string // CPU request, memory request, CPU limit, memory limit
	}{
		{name: "the defaults request a little and limit memory only", environ: directEnv,
			want: [4]string{"10m", "32Mi", "", "128Mi"}},
		{name: "each is set from the file", environ: directEnv,
			file: "pangolin:\n  newtCPURequest: 50m\n  newtMemoryRequest: 64Mi\n  newtCPULimit: \"1\"\n  newtMemoryLimit: 256Mi\n",
			want: [4]string{"50m", "64Mi", "1", "256Mi"}},
		{name: "an empty limit sets none, and a request of any size is then accepted",
			environ: append(directEnv[:len(directEnv):len(directEnv)], "PIC_PANGOLIN_NEWT_MEMORY_REQUEST=1Gi"),
			file:    "pangolin:\n  newtMemoryLimit: \"\"\n",
			want:    [4]string{"10m", "1Gi", "", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := mustLoad(t, []string{"--config", writeConfig(t, tc.file)}, tc.environ)
			p := cfg.Pangolin
			assert.Equal(t, tc.want, [4]string{p.NewtCPURequest, p.NewtMemoryRequest, p.NewtCPULimit, p.NewtMemoryLimit})
		})
	}
}
