package integration_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
)

// secretRequests are the requests PIC sent for Secrets outside namespace: into another
// namespace, or across the cluster.
func (l *pathLog) secretRequests(namespace string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.paths {
		if strings.Contains(p, "/secrets") && !strings.Contains(p, "/namespaces/"+namespace+"/secrets") {
			out = append(out, p)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// TestSecretNamespacesConfineSecretReads: with secretNamespaces, PIC watches and reads
// Secrets in the listed namespace only: a policy there has its Secret read (the
// operator cannot carry a password, which PIC says once it has read it), and a policy
// in another namespace that references a Secret is refused with a Warning naming the
// setting, without any request for Secrets outside the list.
func TestSecretNamespacesConfineSecretReads(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		listed := testenv.NewNamespace(t, env.Client)
		other := testenv.NewNamespace(t, env.Client)
		paths := &pathLog{}
		w := startWith(t, env, paths.wrap, listed, func(c *config.Config) { c.SecretNamespaces = []string{listed} })

		for _, ns := range []string{listed, other} {
			w.tunnelIn(ns, "default")
			w.create(withNamespace(serviceObject("web", 8080), ns))
			w.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-auth"}, StringData: map[string]string{"password": "a-good-password"}})
			w.create(withNamespace(policyFor("web", "web", accessv1alpha1.AccessPolicySpec{
				Password: &accessv1alpha1.SecretKeySource{SecretRef: accessv1alpha1.SecretKeyReference{Name: "web-auth", Key: "password"}},
			}), ns))
			w.create(withNamespace(ingressFor("web", "pangolin", rule("web."+ns+".example.com", "/", "web", 8080)), ns))
		}

		note := w.eventuallyEventIn(listed, pic.ReasonAccessPolicyUnsupported)
		assert.Contains(t, note, "password", "in the listed namespace the Secret is read, and the password found")
		note = w.eventuallyEventIn(other, pic.ReasonAccessPolicySecretForbidden)
		assert.Contains(t, note, "secretNamespaces")
		assert.NotContains(t, note, "a-good-password")
		var published tunnelv1alpha1.PangolinResourceList
		require.NoError(t, w.c.List(w.ctx, &published))
		for _, r := range published.Items {
			assert.NotContains(t, []string{listed, other}, r.Namespace, "neither host is published: %s/%s", r.Namespace, r.Name)
		}

		assert.Empty(t, paths.secretRequests(listed), "requests for Secrets outside %s", listed)
	})
}
