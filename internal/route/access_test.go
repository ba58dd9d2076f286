package route_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

const value = "hunter22-s3cr3t"

var ref = route.SecretRef{Namespace: "shop", Name: "web-auth", Key: "password"}

const shown = "from Secret shop/web-auth key password"

func TestSecretPrintsOnlyItsReference(t *testing.T) {
	s := route.NewSecret(ref, value)
	policy := &route.AccessPolicy{Password: &s, PinCode: &s, HeaderAuth: &route.HeaderAuth{User: s, Password: s}}
	access := route.Access{Policy: policy}
	values := map[string]any{
		"the secret":                 s,
		"a pointer to it":            &s,
		"a policy holding it":        policy,
		"an Access holding a policy": access,
		"a slice of it":              []route.Secret{s},
		"a map of it":                map[string]route.Secret{"k": s},
		"an error wrapping it":       fmt.Errorf("set password %v: %w", s, errors.New("refused")),
		// fmt cannot call methods on unexported fields, and skips all methods after a
		// verb a struct does not support: the value must not be reachable by reflection.
		"a struct holding it unexported": struct {
			s route.Secret
			p *route.Secret
		}{s, &s},
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%T %v"} {
			t.Run(name+" "+verb, func(t *testing.T) {
				out := fmt.Sprintf(verb, v)
				assert.NotContains(t, out, value)
			})
		}
	}
	assert.Equal(t, shown, s.String())
	assert.Equal(t, shown, fmt.Sprint(s))
	assert.Equal(t, shown, fmt.Sprintf("%v", &s))
	assert.Equal(t, `"`+shown+`"`, fmt.Sprintf("%q", s))
	assert.Contains(t, fmt.Sprintf("%#v", s), shown)
	assert.Contains(t, fmt.Sprintf("%+v", policy), shown, "a policy printed shows where each secret comes from")
}

func TestSecretEncodesOnlyItsReference(t *testing.T) {
	s := route.NewSecret(ref, value)
	policy := route.AccessPolicy{Password: &s, HeaderAuth: &route.HeaderAuth{User: s, Password: s}}

	js, err := json.Marshal(policy)
	require.NoError(t, err)
	assert.NotContains(t, string(js), value)
	assert.Contains(t, string(js), `"Password":"`+shown+`"`)

	text, err := s.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, shown, string(text))

	k8sYAML, err := yaml.Marshal(policy)
	require.NoError(t, err)
	assert.NotContains(t, string(k8sYAML), value)
	assert.Contains(t, string(k8sYAML), shown)

	goYAML, err := yamlv3.Marshal(policy)
	require.NoError(t, err)
	assert.NotContains(t, string(goYAML), value)
	assert.Contains(t, string(goYAML), shown)
}

func TestSecretLogsOnlyItsReference(t *testing.T) {
	s := route.NewSecret(ref, value)

	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{Verbosity: 9})
	log.Info("setting password", "password", s, "pointer", &s)
	log.V(5).Info("debug", "policy", route.AccessPolicy{Password: &s})
	log.Error(errors.New("refused"), "failed", "secret", s)
	require.Len(t, logged, 3)
	for _, line := range logged {
		assert.NotContains(t, line, value)
	}
	assert.Contains(t, logged[0], shown)

	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("setting password", "password", s)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("setting password", "password", s, "policy", route.AccessPolicy{Password: &s})
	assert.NotContains(t, buf.String(), value)
	assert.Contains(t, buf.String(), shown)
}

func TestSecretRevealsItsValueOnlyWhenAsked(t *testing.T) {
	s := route.NewSecret(ref, value)
	assert.Equal(t, value, s.Reveal())
	assert.Equal(t, ref, s.Ref())
}

func TestDigest(t *testing.T) {
	key := route.DigestKey("api-key-secret")
	otherKey := route.DigestKey("another-api-key")
	pin := route.NewSecret(ref, "123456")

	cases := []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"the same value under the same key gives the same record", pin.Digest(key), route.NewSecret(route.SecretRef{Name: "other"}, "123456").Digest(key), true},
		{"another value gives another record", pin.Digest(key), route.NewSecret(ref, "123457").Digest(key), false},
		{"another key gives another record, so a new API key rewrites each secret once", pin.Digest(key), pin.Digest(otherKey), false},
		{"header auth records differ by user and password boundaries", route.HeaderAuth{User: route.NewSecret(ref, "ab"), Password: route.NewSecret(ref, "cd")}.Digest(key), route.HeaderAuth{User: route.NewSecret(ref, "a"), Password: route.NewSecret(ref, "bcd")}.Digest(key), false},
		{"header auth records differ by extended compatibility", route.HeaderAuth{User: pin, Password: pin}.Digest(key), route.HeaderAuth{User: pin, Password: pin, ExtendedCompatibility: true}.Digest(key), false},
		{"a secret and header auth of the same bytes differ", pin.Digest(key), route.HeaderAuth{User: pin}.Digest(key), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.equal {
				assert.Equal(t, tc.a, tc.b)
			} else {
				assert.NotEqual(t, tc.a, tc.b)
			}
		})
	}

	d := pin.Digest(key)
	assert.Len(t, d, 64, "hex of 32 bytes")
	assert.NotContains(t, d, "123456")
	plain := sha256.Sum256([]byte("123456"))
	assert.NotEqual(t, hex.EncodeToString(plain[:]), d, "not a plain hash: a 6-digit PIN's is reversed by trying a million values")
}
