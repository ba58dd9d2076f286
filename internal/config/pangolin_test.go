package config

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// keyFiles are API key and CA files for the precedence table, which is built before
// any test runs; TestMain writes them.
var keyFiles = func() (f struct{ dir, file, env, flag, fileCA, envCA, flagCA string }) {
	f.dir = filepath.Join(os.TempDir(), "pic-config-test-"+strconv.Itoa(os.Getpid()))
	f.file, f.env, f.flag = filepath.Join(f.dir, "file.key"), filepath.Join(f.dir, "env.key"), filepath.Join(f.dir, "flag.key")
	f.fileCA, f.envCA, f.flagCA = filepath.Join(f.dir, "file-ca.pem"), filepath.Join(f.dir, "env-ca.pem"), filepath.Join(f.dir, "flag-ca.pem")
	return f
}()

func TestMain(m *testing.M) {
	ca := testCA()
	files := map[string]string{
		keyFiles.file: "file-key\n", keyFiles.env: "env-key", keyFiles.flag: "  flag-key\n",
		keyFiles.fileCA: ca, keyFiles.envCA: ca, keyFiles.flagCA: ca,
	}
	if err := os.MkdirAll(keyFiles.dir, 0o700); err != nil {
		panic(err)
	}
	for path, data := range files {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	_ = os.RemoveAll(keyFiles.dir)
	os.Exit(code)
}

// testCA returns a self-signed certificate in PEM.
func testCA() string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// writeFile writes a file in a test directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// pangolinEnv is a complete configuration of the pangolin sink.
var pangolinEnv = []string{"PIC_SINK=pangolin", "PIC_PANGOLIN_URL=https://pangolin.example.com/v1", "PIC_PANGOLIN_ORG=acme", EnvAPIKey + "=" + testAPIKey}

func TestPangolin(t *testing.T) {
	keyFile := writeFile(t, "api-key", "\n  "+testAPIKey+"\n")
	tests := []struct {
		name    string
		args    []string
		environ []string
		check   func(t *testing.T, c *Config, o Origins)
	}{
		{
			name:    "the pangolin sink with a URL, an org and a key from the environment",
			environ: pangolinEnv,
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, "pangolin", c.Sink)
				assert.Equal(t, Pangolin{URL: "https://pangolin.example.com/v1", Org: "acme", OwnerID: "default", DriftPeriod: time.Hour, MaxConcurrentReads: 4, NewtImage: DefaultNewtImage, NewtReplicas: 1, NewtOwner: "pangolin-ingress-controller", APIKey: testAPIKey,
					NewtCPURequest: DefaultNewtCPURequest, NewtMemoryRequest: DefaultNewtMemoryRequest, NewtMemoryLimit: DefaultNewtMemoryLimit}, c.Pangolin)
				assert.Equal(t, testAPIKey, c.Pangolin.APIKey.Reveal())
				assert.Equal(t, "env PIC_PANGOLIN_ORG", o["pangolin.org"].String())
			},
		},
		{
			name:    "the key is read from its file and trimmed",
			args:    []string{"--pangolin-api-key-file=" + keyFile},
			environ: pangolinEnv[:3],
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, testAPIKey, c.Pangolin.APIKey.Reveal())
				assert.Equal(t, keyFile, c.Pangolin.APIKeyFile)
			},
		},
		{
			name:    "a blank key variable counts as unset",
			args:    []string{"--pangolin-api-key-file=" + keyFile},
			environ: append(pangolinEnv[:3:3], EnvAPIKey+"=  "),
			check:   func(t *testing.T, c *Config, o Origins) { assert.Equal(t, testAPIKey, c.Pangolin.APIKey.Reveal()) },
		},
		{
			name:    "a CA bundle and an owner id",
			environ: append(pangolinEnv[:4:4], "PIC_PANGOLIN_CA_FILE="+keyFiles.envCA, "PIC_PANGOLIN_OWNER_ID=eu-1"),
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, keyFiles.envCA, c.Pangolin.CAFile)
				assert.Equal(t, "eu-1", c.Pangolin.OwnerID)
			},
		},
		{
			name:    "another sink needs none of the pangolin keys",
			environ: []string{"PIC_SINK=pangolinresource"},
			check:   func(t *testing.T, c *Config, o Origins) { assert.Empty(t, c.Pangolin.APIKey) },
		},
		{
			name: "an owner id of 20 characters is the longest",
			args: []string{"--pangolin-owner-id=a2345678901234567890"},
			check: func(t *testing.T, c *Config, o Origins) {
				assert.Equal(t, "a2345678901234567890", c.Pangolin.OwnerID)
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

func TestInvalidPangolin(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, "empty", " \n")
	notPEM := writeFile(t, "ca.txt", "not a certificate, and "+testAPIKey)
	keyFile := writeFile(t, "api-key", testAPIKey)
	tests := []struct {
		name    string
		file    string
		args    []string
		environ []string
		noKey   bool // the test adds PIC_PANGOLIN_API_KEY unless told not to
		want    []string
	}{
		{name: "the pangolin sink without a URL, an org or a key names every missing key and how to set it",
			environ: []string{"PIC_SINK=pangolin"}, noKey: true,
			want: []string{
				"pangolin.url is required when sink is pangolin: set pangolin.url, PIC_PANGOLIN_URL or --pangolin-url to the Integration API base URL, e.g. https://pangolin.example.com/v1",
				"pangolin.org is required when sink is pangolin: set pangolin.org, PIC_PANGOLIN_ORG or --pangolin-org to the organization id",
				"the Pangolin API key is required when sink is pangolin: set pangolin.apiKeyFile, PIC_PANGOLIN_API_KEY_FILE or --pangolin-api-key-file to a file holding it, or set PIC_PANGOLIN_API_KEY",
			}},
		{name: "the pangolin sink without a key",
			file: "sink: pangolin\npangolin:\n  url: https://pangolin.example.com/v1\n  org: acme\n", noKey: true,
			want: []string{"the Pangolin API key is required when sink is pangolin: set pangolin.apiKeyFile, PIC_PANGOLIN_API_KEY_FILE or --pangolin-api-key-file to a file holding it, or set PIC_PANGOLIN_API_KEY"}},
		{name: "a key from both the environment and a file",
			args:    []string{"--pangolin-api-key-file=" + keyFile},
			environ: pangolinEnv, noKey: true,
			want: []string{"pangolin.apiKeyFile (--pangolin-api-key-file) and PIC_PANGOLIN_API_KEY both give the Pangolin API key: choose one"}},
		{name: "a key file that cannot be read names the key and the path",
			environ: append(pangolinEnv[:3:3], "PIC_PANGOLIN_API_KEY_FILE="+dir+"/missing"), noKey: true,
			want: []string{`pangolin.apiKeyFile (PIC_PANGOLIN_API_KEY_FILE) = "` + dir + `/missing": cannot read the API key: open ` + dir + `/missing: no such file or directory`}},
		{name: "an empty key file",
			file: "pangolin:\n  apiKeyFile: " + empty + "\n", noKey: true,
			want: []string{`pangolin.apiKeyFile (file {file}) = "` + empty + `": the file is empty; want the API key in it`}},
		{name: "the key cannot be in the configuration file",
			file: "pangolin:\n  apiKey: " + testAPIKey + "\n",
			want: []string{`file {file}: unknown key "pangolin.apiKey" (did you mean "apiKeyFile"?)`}},
		{name: "a URL that is not absolute",
			environ: []string{"PIC_PANGOLIN_URL=pangolin.example.com/v1"},
			want:    []string{`pangolin.url (PIC_PANGOLIN_URL) = "pangolin.example.com/v1": want an absolute http or https URL, such as https://pangolin.example.com/v1`}},
		{name: "a URL of another scheme",
			args: []string{"--pangolin-url=ftp://pangolin.example.com"},
			want: []string{`pangolin.url (--pangolin-url) = "ftp://pangolin.example.com": want an absolute http or https URL, such as https://pangolin.example.com/v1`}},
		{name: "an owner id that is too long",
			environ: []string{"PIC_PANGOLIN_OWNER_ID=a23456789012345678901"},
			want:    []string{`pangolin.ownerId (PIC_PANGOLIN_OWNER_ID) = "a23456789012345678901": ` + wantOwnerID}},
		{name: "an owner id with capitals",
			file: "pangolin:\n  ownerId: EU\n",
			want: []string{`pangolin.ownerId (file {file}) = "EU": ` + wantOwnerID}},
		{name: "an owner id that starts with a dash",
			args: []string{"--pangolin-owner-id=-eu"},
			want: []string{`pangolin.ownerId (--pangolin-owner-id) = "-eu": ` + wantOwnerID}},
		{name: "an empty owner id",
			args: []string{"--pangolin-owner-id="},
			want: []string{`pangolin.ownerId (--pangolin-owner-id) = "": ` + wantOwnerID}},
		{name: "a CA file that cannot be read",
			args: []string{"--pangolin-ca-file=" + dir + "/ca.pem"},
			want: []string{`pangolin.caFile (--pangolin-ca-file) = "` + dir + `/ca.pem": cannot read the CA bundle: open ` + dir + `/ca.pem: no such file or directory`}},
		{name: "a CA file without a certificate, whose content is never quoted",
			environ: []string{"PIC_PANGOLIN_CA_FILE=" + notPEM},
			want:    []string{`pangolin.caFile (PIC_PANGOLIN_CA_FILE) = "` + notPEM + `": the file holds no PEM certificate; want a CA bundle such as ca.crt`}},
		{name: "an unknown sink gets a suggestion and the known sinks",
			environ: []string{"PIC_SINK=pangolin-resource"},
			want:    []string{`sink (PIC_SINK) = "pangolin-resource": unknown sink "pangolin-resource" (did you mean "pangolinresource"?); want one of pangolinresource, pangolin, inmemory`}},
		{name: "a pangolin group that is not a mapping",
			file: "pangolin: https://pangolin.example.com\n",
			want: []string{`pangolin (file {file}) = "https://pangolin.example.com": want a mapping with keys url, org, apiKeyFile, ownerId, caFile, driftPeriod, maxConcurrentReads, newtImage, newtReplicas, newtCPURequest, newtMemoryRequest, newtCPULimit, newtMemoryLimit, newtEndpoint, newtOwner`}},
		{name: "a misspelt pangolin key",
			file: "pangolin:\n  URL: https://pangolin.example.com/v1\n  orgId: acme\n",
			want: []string{`file {file}: unknown key "pangolin.orgId" (did you mean "org"?)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
				args = append([]string{"--config", path}, args...)
			}
			environ := tt.environ
			if !tt.noKey { // a key beside the configuration must stay out of every message
				environ = append(environ[:len(environ):len(environ)], EnvAPIKey+"="+testAPIKey)
			}
			_, _, err := loadWith(t, args, environ, &bytes.Buffer{})
			require.Error(t, err)
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "{file}", path)
			}
			assert.Equal(t, want, problemsOf(t, err))
			assert.NotContains(t, err.Error(), testAPIKey)
		})
	}
}

func TestAPIKeyIsNeverPrinted(t *testing.T) {
	keyFile := writeFile(t, "api-key", testAPIKey)
	for _, tt := range []struct {
		name    string
		args    []string
		environ []string
		want    string
	}{
		{"from the environment", nil, pangolinEnv, "(set, from env PIC_PANGOLIN_API_KEY)"},
		{"from a file", []string{"--pangolin-api-key-file", keyFile}, pangolinEnv[:3], "(set, from file " + keyFile + ")"},
		{"not set", nil, nil, "(not set)"},
	} {
		t.Run("--print-config with a key "+tt.name, func(t *testing.T) {
			cfg, origins := mustLoad(t, append(tt.args, "--print-config"), tt.environ)
			var out bytes.Buffer
			require.NoError(t, Print(&out, cfg, origins))
			assert.NotContains(t, out.String(), testAPIKey)
			assert.Contains(t, out.String(), "  # apiKey (PIC_PANGOLIN_API_KEY or apiKeyFile): "+tt.want+"\n")
			again, _ := mustLoad(t, []string{"--config", writeConfig(t, out.String())}, tt.environ)
			cfg.PrintConfig = false
			assert.Equal(t, cfg, again, "what it prints loads back")
		})
	}

	t.Run("a Secret hides its value whichever way it is written", func(t *testing.T) {
		s := Secret(testAPIKey)
		c := Config{Pangolin: Pangolin{APIKey: s}}
		j, err := json.Marshal(c)
		require.NoError(t, err)
		y, err := yaml.Marshal(c)
		require.NoError(t, err)
		text, err := s.MarshalText()
		require.NoError(t, err)
		for _, out := range []string{
			fmt.Sprint(s), fmt.Sprintf("%s %v %q %x %d %+v %#v", s, s, s, s, s, s, s), fmt.Sprintf("%+v %#v", c, c),
			string(j), string(y), string(text), s.String(), s.GoString(),
		} {
			assert.NotContains(t, out, testAPIKey)
			assert.Contains(t, out, "[redacted]")
		}
		assert.Equal(t, testAPIKey, s.Reveal())
	})
}
