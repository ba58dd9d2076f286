package pangolin

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarks(t *testing.T) {
	plain := mark{Kind: "Ingress", Namespace: "shop", Name: "web", Host: "app.example.com", PublicHost: "app.example.com"}
	override := mark{Kind: "HTTPRoute", Namespace: "shop", Name: "web.v2", Host: "app.internal.org", PublicHost: "app.example.com"}
	cases := []struct {
		name     string
		mark     mark
		wantName string
	}{
		{"a host published as named reads as host and object", plain, "app.example.com (Ingress shop/web)"},
		{"a host published under another name records the source host", override, "app.example.com (HTTPRoute shop/web.v2, host app.internal.org)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := resourceName(c.mark)
			assert.Equal(t, c.wantName, name)
			back, ok := parseName(name)
			require.True(t, ok)
			assert.Equal(t, c.mark, back)
			nice := niceID("default", c.mark)
			got, ok := owned("default", nice, name)
			assert.True(t, ok)
			assert.Equal(t, c.mark, got)
		})
	}

	nice := niceID("default", plain)
	notOurs := []struct {
		name, niceID, resource string
		ownerID                string
	}{
		{"another owner id's resource", niceID("cluster-b", plain), resourceName(plain), "default"},
		{"a resource of ours seen by another owner id", nice, resourceName(plain), "cluster-b"},
		{"a name edited by hand", nice, "my app", "default"},
		{"a name naming another object", nice, "app.example.com (Ingress shop/api)", "default"},
		{"a name naming another host", nice, "www.example.com (Ingress shop/web)", "default"},
		{"a forged niceId with the right prefix", "pic-default-0000000000000000", resourceName(plain), "default"},
		{"a random niceId", "brave-quiet-otter", resourceName(plain), "default"},
		{"an owner id that is a prefix of another", niceID("default-b", plain), resourceName(plain), "default"},
	}
	for _, c := range notOurs {
		t.Run(c.name+" is not ours", func(t *testing.T) {
			_, ok := owned(c.ownerID, c.niceID, c.resource)
			assert.False(t, ok)
		})
	}

	for _, name := range []string{"", "app.example.com", "app.example.com (Ingress)", "app.example.com (Ingress shop)",
		" (Ingress shop/web)", "app.example.com (Ingress shop/web, host app.example.com)", "a b (Ingress shop/web)", "app (Ingress a/b/c)"} {
		t.Run(fmt.Sprintf("%q does not parse", name), func(t *testing.T) {
			_, ok := parseName(name)
			assert.False(t, ok)
		})
	}
	assert.Len(t, niceID("default", plain), len("pic-default-")+16)
}

func TestOptionsFromEnv(t *testing.T) {
	files := map[string]string{"/key": " id.secret-from-file\n", "/ca": "PEM"}
	readFile := func(name string) ([]byte, error) {
		if v, ok := files[name]; ok {
			return []byte(v), nil
		}
		return nil, os.ErrNotExist
	}
	full := map[string]string{EnvURL: "https://pangolin.example.com/v1", EnvOrg: "home", EnvAPIKey: "id." + secretKey.Secret}
	with := func(changes map[string]string) func(string) (string, bool) {
		env := map[string]string{}
		for k, v := range full {
			env[k] = v
		}
		for k, v := range changes {
			if v == "" {
				delete(env, k)
			} else {
				env[k] = v
			}
		}
		return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	}
	cases := []struct {
		name    string
		env     map[string]string
		want    Options
		wantErr []string
	}{
		{name: "the three required variables are enough", env: nil,
			want: Options{URL: "https://pangolin.example.com/v1", Org: "home", APIKey: "id." + secretKey.Secret, OwnerID: "default"}},
		{name: "the key can come from a file, and the CA too", env: map[string]string{EnvAPIKey: "", EnvAPIKeyFile: "/key", EnvCAFile: "/ca", EnvOwnerID: "cluster-b"},
			want: Options{URL: "https://pangolin.example.com/v1", Org: "home", APIKey: "id.secret-from-file", OwnerID: "cluster-b", CAPEM: []byte("PEM")}},
		{name: "every missing variable is named", env: map[string]string{EnvURL: "", EnvOrg: "", EnvAPIKey: ""},
			wantErr: []string{EnvURL + " is not set", EnvOrg + " is not set", EnvAPIKey + " (or " + EnvAPIKeyFile + ") is not set"}},
		{name: "a key and a key file together are refused", env: map[string]string{EnvAPIKeyFile: "/key"},
			wantErr: []string{"set " + EnvAPIKey + " or " + EnvAPIKeyFile + ", not both"}},
		{name: "a missing key file is named", env: map[string]string{EnvAPIKey: "", EnvAPIKeyFile: "/nope"},
			wantErr: []string{"read the API key file /nope (" + EnvAPIKeyFile + ")"}},
		{name: "an owner id that cannot be in a niceId is refused", env: map[string]string{EnvOwnerID: "Cluster_B"},
			wantErr: []string{EnvOwnerID + `="Cluster_B"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := OptionsFromEnv(with(c.env), readFile)
			if c.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
				return
			}
			require.Error(t, err)
			for _, want := range c.wantErr {
				assert.Contains(t, err.Error(), want)
			}
			assert.NotContains(t, err.Error(), secretKey.Secret)
		})
	}
	t.Run("printing the options never shows the key", func(t *testing.T) {
		o, err := OptionsFromEnv(with(nil), readFile)
		require.NoError(t, err)
		for _, s := range []string{fmt.Sprint(o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), o.String()} {
			assert.NotContains(t, s, secretKey.Secret)
			assert.True(t, strings.Contains(s, "[redacted]"))
		}
	})
}
