package integration_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	"github.com/stefb69/pangolin-ingress-controller/sources/loadbalancer"
)

// withServices runs the Service source only: a Service of type LoadBalancer of PIC's
// class is published as TCP and UDP ports.
func withServices(c *config.Config) { c.Sources = []string{loadbalancer.Name} }

// sentResources keeps the last PangolinResource a PIC sent to the API server (create or
// update) under each name, as sent: what PIC rendered, before the API server pruned or
// defaulted anything.
type sentResources struct {
	namespace string
	mu        sync.Mutex
	sent      map[string]tunnelv1alpha1.PangolinResource
}

func (s *sentResources) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		write := req.Method == http.MethodPost || req.Method == http.MethodPut
		if !write || req.Body == nil || namespacedResource(req.URL.Path) != s.namespace+"/pangolinresources" || strings.HasSuffix(req.URL.Path, "/status") {
			return rt.RoundTrip(req)
		}
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		var r tunnelv1alpha1.PangolinResource
		if err := json.Unmarshal(body, &r); err == nil {
			s.mu.Lock()
			if s.sent == nil {
				s.sent = map[string]tunnelv1alpha1.PangolinResource{}
			}
			s.sent[r.Name] = r
			s.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (s *sentResources) get(name string) (tunnelv1alpha1.PangolinResource, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.sent[name]
	return r, ok
}

// eventuallyPorts waits until the test namespace holds exactly the PangolinResources of
// the given port keys ("tcp:5432"), and returns them by port key.
func (w *world) eventuallyPorts(keys ...string) map[string]tunnelv1alpha1.PangolinResource {
	w.t.Helper()
	var got map[string]tunnelv1alpha1.PangolinResource
	require.EventuallyWithT(w.t, func(c *assert.CollectT) {
		var list tunnelv1alpha1.PangolinResourceList
		if !assert.NoError(c, w.c.List(w.ctx, &list, client.InNamespace(w.ns))) {
			return
		}
		got = map[string]tunnelv1alpha1.PangolinResource{}
		var found []string
		for _, r := range list.Items {
			got[r.Annotations[pic.AnnotationHost]] = r
			found = append(found, r.Annotations[pic.AnnotationHost])
		}
		assert.ElementsMatch(c, keys, found)
	}, wait, tick)
	return got
}

// rawSpec is the spec of a TCP or UDP port's resource in the variant's shape: protocol,
// the public port in proxyConfig, no httpConfig, one target of the same method. The
// fields the CRDs default (enableProxy, the fork's target priority) are written with
// their default values.
func rawSpec(fork bool, protocol string, port int32, backend string) tunnelv1alpha1.PangolinResourceSpec {
	spec := tunnelv1alpha1.PangolinResourceSpec{
		Name: protocol + ":" + strconv.Itoa(int(port)), Enabled: ptr.To(true), Protocol: protocol,
		TunnelRef:   &tunnelv1alpha1.TunnelRef{Name: "default"},
		ProxyConfig: &tunnelv1alpha1.ProxyConfig{EnableProxy: ptr.To(true), ProxyPort: port},
	}
	target := tunnelv1alpha1.Target{IP: backend, Port: port, Method: protocol}
	if fork {
		target.Priority = ptr.To[int32](100)
		spec.Targets = []tunnelv1alpha1.Target{target}
	} else {
		spec.Target = &target
	}
	return spec
}

// TestRawResourcesStoredAsRendered: the PangolinResources of a Service's TCP and UDP
// ports, created on the real API server with the variant's CRD, read back exactly as
// PIC rendered them: the API server prunes no field of them and defaults none that PIC
// left out. So PIC finds them converged and never writes them again; a field the API
// server changed would make every reconcile update them.
func TestRawResourcesStoredAsRendered(t *testing.T) {
	testenv.ForEachVariant(t, func(t *testing.T, env *testenv.Env) {
		ns := testenv.NewNamespace(t, env.Client)
		sent := &sentResources{namespace: ns}
		w := startWith(t, env, sent.wrap, ns, withServices)
		w.tunnel("default")
		w.create(loadBalancer("db",
			corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP},
			corev1.ServicePort{Name: "dns", Port: 5353, Protocol: corev1.ProtocolUDP}))
		stored := w.eventuallyPorts("tcp:5432", "udp:5353")
		backend := "db." + ns + ".svc.cluster.local"

		for key, want := range map[string]tunnelv1alpha1.PangolinResourceSpec{
			"tcp:5432": rawSpec(w.fork, "tcp", 5432, backend),
			"udp:5353": rawSpec(w.fork, "udp", 5353, backend),
		} {
			t.Run(key+" reads back as PIC rendered it", func(t *testing.T) {
				got := stored[key]
				rendered, ok := sent.get(got.Name)
				require.True(t, ok, "PIC sent %s", got.Name)
				assert.Equal(t, want, rendered.Spec, "rendered")
				assert.Equal(t, rendered.Spec, got.Spec, "stored: the API server pruned or defaulted a field")
				assert.Equal(t, rendered.Labels, got.Labels)
				assert.Equal(t, rendered.Annotations, got.Annotations)
				assert.Equal(t, rendered.OwnerReferences, got.OwnerReferences)
			})
		}

		t.Run("a converged resource is never written again", func(t *testing.T) {
			before := w.requests.writesTo(ns, "pangolinresources")
			for _, method := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete} {
				assert.Zero(t, before[method], "%s of a resource just created", method)
			}
			upToDate := w.upToDate(loadbalancer.Name, "db")
			// A label change wakes the Service's reconcile, which reads both back.
			require.NoError(t, testenv.Update(w.ctx, w.c, types.NamespacedName{Namespace: ns, Name: "db"},
				func(s *corev1.Service) { s.Labels = map[string]string{"touched": "yes"} }, wait))
			w.eventuallyUpToDateSince(upToDate, loadbalancer.Name, "db")
			assert.Equal(t, before, w.requests.writesTo(ns, "pangolinresources"))
		})
	})
}

// TestRawResourcesWithoutProxyConfig: with a PangolinResource CRD that has no
// spec.proxyConfig (an operator that cannot carry TCP or UDP resources), PIC refuses a
// Service's port with RawResourceUnsupported and writes no PangolinResource. Each
// variant's CRD, so edited, runs on a control plane of its own: the shared ones hold
// the CRDs as released.
func TestRawResourcesWithoutProxyConfig(t *testing.T) {
	testenv.SkipIfShort(t)
	for _, v := range testenv.Variants() {
		t.Run(v.Name, func(t *testing.T) {
			env, err := testenv.StartEnv(withoutProxyConfig(t, v), false)
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, env.Stop()) })

			w := start(t, env, withServices)
			w.tunnel("default")
			w.create(loadBalancer("db", corev1.ServicePort{Name: "pg", Port: 5432, Protocol: corev1.ProtocolTCP}))
			note := w.eventuallyEventIn(w.ns, pic.ReasonRawResourceUnsupported)
			assert.Contains(t, note, "5432/tcp")
			// The refusal is reported once the sink has spoken: a write would precede it.
			assert.Empty(t, w.requests.writesTo(w.ns, "pangolinresources"))
			var list tunnelv1alpha1.PangolinResourceList
			require.NoError(t, w.c.List(w.ctx, &list, client.InNamespace(w.ns)))
			assert.Empty(t, list.Items)
		})
	}
}

// withoutProxyConfig is a copy of v's CRDs, in a folder of the test's, with
// spec.proxyConfig taken out of the PangolinResource CRD.
func withoutProxyConfig(t *testing.T, v testenv.Variant) testenv.Variant {
	t.Helper()
	dir := t.TempDir()
	files, err := testenv.CRDFiles(v.CRDDir)
	require.NoError(t, err)
	edited := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var crd apiextensionsv1.CustomResourceDefinition
		require.NoError(t, yaml.Unmarshal(data, &crd))
		if crd.Name == tunnelv1alpha1.ResourceCRDName {
			require.Len(t, crd.Spec.Versions, 1)
			schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
			spec := schema.Properties["spec"]
			require.Contains(t, spec.Properties, "proxyConfig")
			delete(spec.Properties, "proxyConfig")
			schema.Properties["spec"] = spec
			data, err = yaml.Marshal(&crd)
			require.NoError(t, err)
			edited = true
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600))
	}
	require.True(t, edited, "no %s in %s", tunnelv1alpha1.ResourceCRDName, v.CRDDir)
	return testenv.Variant{Name: v.Name + "-without-proxyConfig", CRDDir: dir}
}
