package pangolin

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
)

func TestMarks(t *testing.T) {
	plain := mark{Kind: "Ingress", Namespace: "shop", Name: "web", Host: "app.example.com", PublishedHost: "app.example.com"}
	override := mark{Kind: "HTTPRoute", Namespace: "shop", Name: "web.v2", Host: "app.internal.org", PublishedHost: "app.example.com"}
	cases := []struct {
		name     string
		mark     mark
		wantName string
	}{
		{"a host published as named reads as host and object", plain, "app.example.com (Ingress shop/web)"},
		{"a host published under another name records the source host", override, "app.example.com (HTTPRoute shop/web.v2, host app.internal.org)"},
		// A raw resource's claim is its port key, which holds none of the characters the
		// name is read by.
		{"a TCP port reads as port key and object", mark{Kind: "Service", Namespace: "prod", Name: "db", Host: "tcp:5432", PublishedHost: "tcp:5432"}, "tcp:5432 (Service prod/db)"},
		{"a UDP port too", mark{Kind: "UDPRoute", Namespace: "kube-system", Name: "dns", Host: "udp:53", PublishedHost: "udp:53"}, "udp:53 (UDPRoute kube-system/dns)"},
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

func TestOptionsFromConfig(t *testing.T) {
	cfg := config.Default()
	cfg.Sink = Name
	cfg.Pangolin.URL, cfg.Pangolin.Org, cfg.Pangolin.OwnerID = "https://pangolin.example.com/v1", "home", "cluster-b"
	cfg.Pangolin.APIKey = config.Secret("id." + secretKey.Secret)
	got, err := optionsFrom(cfg)
	require.NoError(t, err)
	assert.Equal(t, Options{URL: "https://pangolin.example.com/v1", Org: "home", APIKey: "id." + secretKey.Secret, OwnerID: "cluster-b", ResyncPeriod: cfg.ResyncPeriod, DriftPeriod: DefaultDriftPeriod, MaxConcurrentReads: DefaultMaxConcurrentReads}, got)
	for _, s := range []string{fmt.Sprint(got), fmt.Sprintf("%+v", got), fmt.Sprintf("%#v", got), got.String()} {
		assert.NotContains(t, s, secretKey.Secret, "printing the options never shows the key")
		assert.Contains(t, s, "[redacted]")
	}

	cfg.Pangolin.CAFile = t.TempDir() + "/missing.pem"
	_, err = optionsFrom(cfg)
	assert.ErrorContains(t, err, "read the CA bundle")
}
