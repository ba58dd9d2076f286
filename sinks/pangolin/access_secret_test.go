package pangolin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/engine"
	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim/simtest"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// lines is a logger that keeps every line, at every verbosity.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.all = append(l.all, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (l *lines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// TestSecretsNeverShow applies, changes, refuses and detaches a policy with every kind
// of secret, and looks for the values in every log line, rejection, error, the record
// and render's output.
func TestSecretsNeverShow(t *testing.T) {
	secrets := []string{passwordValue, pincodeValue, headerUser, headerPass, "second-password-77", "999999", "another-pass-1"}
	shop := ingress("shop", "web")
	const host = "app.example.com"
	w := newWorld(t, accessOrg)
	var logs lines
	w.ctx = log.IntoContext(context.Background(), logs.logger())
	var said []string
	keep := func(o outcome) {
		for _, rj := range o.rejections {
			said = append(said, rj.Message, fmt.Sprintf("%v %+v %#v", rj, rj, rj))
		}
		if o.err != nil {
			said = append(said, o.err.Error(), fmt.Sprintf("%+v", o.err))
		}
		said = append(said, fmt.Sprintf("%v %+v", o.plan, o.applied))
	}

	all := everything()
	keep(w.reconcile(shop, protected(web(shop, host, 8080), true, all)))
	changed := everything()
	pw := secretOf("web-auth", "password", "second-password-77")
	changed.Password = &pw
	keep(w.reconcile(shop, protected(web(shop, host, 8080), true, changed)))
	// Refused (by a server that quotes what it was sent), then out of reach, on the
	// secret writes.
	w.fault(simtest.When(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/pincode") }, func(rw http.ResponseWriter, _ *http.Request) bool {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusBadRequest)
		_, _ = rw.Write([]byte(`{"data":null,"success":false,"error":true,"message":"Validation error: pincode 999999","status":400}`))
		return true
	}))
	other := everything()
	pin := secretOf("web-auth", "pin", "999999")
	other.PinCode = &pin
	keep(w.reconcile(shop, protected(web(shop, host, 8080), true, other)))
	w.fault(simtest.When(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/header-auth") }, simtest.Outage(http.StatusServiceUnavailable)))
	other.HeaderAuth = &route.HeaderAuth{User: secretOf("web-basic", "username", headerUser), Password: secretOf("web-basic", "password", "another-pass-1")}
	keep(w.reconcile(shop, protected(web(shop, host, 8080), true, other)))
	w.fault(nil)
	keep(w.reconcile(shop, web(shop, host, 8080)))

	records, err := w.accessRecords.Load(w.ctx)
	require.NoError(t, err)
	recordJSON, err := json.Marshal(records)
	require.NoError(t, err)

	require.NotEmpty(t, logs.text())
	for _, v := range secrets {
		assert.NotContains(t, logs.text(), v, "a log line")
		for _, s := range said {
			assert.NotContains(t, s, v, "a rejection, an error, the plan or what was applied")
		}
		assert.NotContains(t, string(recordJSON), v, "the record")
	}
	assert.Contains(t, strings.Join(said, "\n"), "from Secret shop/web-auth key pin", "the refusal names the secret by reference")
}

func TestRenderShowsAccessByReference(t *testing.T) {
	cfg := config.Default()
	cfg.Pangolin.OwnerID = "render"
	sink, err := offline(context.Background(), plugin.OfflineDeps{Config: cfg, Options: plugin.OfflineOptions{Domains: []string{"example.com"}, DomainsGiven: true}})
	require.NoError(t, err)
	sim := sink.(*simulated)
	shop := ingress("shop", "web")
	pol := everything()
	pol.Users = []string{"alice@corp.example"}
	rt := protected(web(shop, "app.example.com", 8080), true, pol)
	desired, rejections := engine.Desired(engine.Input{Routes: []route.Route{rt}, Features: sim.Features()})
	require.Empty(t, rejections)
	applied, err := sim.Apply(context.Background(), shop, engine.Calculate(shop, desired, nil, nil, nil))
	require.NoError(t, err)
	require.Empty(t, applied.Rejections, "render's org has every role and user a policy names")

	published, err := sim.Published(context.Background())
	require.NoError(t, err)
	require.Len(t, published, 1)
	out, err := yaml.Marshal(published)
	require.NoError(t, err)
	text := string(out)
	for _, want := range []string{
		"policy: shop/web-access", "- k8s-devs", "- alice@corp.example", "autoLoginIdp: id 7", "- '*@corp.example'",
		"- 1 DROP IP 10.1.2.3", "- 2 ACCEPT CIDR 10.0.0.0/8",
		"password: from Secret shop/web-auth key password", "pinCode: from Secret shop/web-auth key pin",
		"from Secret shop/web-basic key username",
	} {
		assert.Contains(t, text, want)
	}
	for _, v := range []string{passwordValue, pincodeValue, headerUser, headerPass} {
		assert.NotContains(t, text, v)
	}
}

func TestConfigMapAccessRecords(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	store := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: "pic-system", OwnerID: "my-cluster", Key: recordKey(secretKey.Token())}
	got, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "no ConfigMap is no record")

	records := map[string]AccessRecord{
		"pic-my-cluster-0123456789abcdef": {ResourceID: 12, Governed: true, Password: &SecretRecord{Digest: "d1", ID: 4}},
	}
	require.NoError(t, store.Save(ctx, records), "created")
	records["pic-my-cluster-fedcba9876543210"] = AccessRecord{ResourceID: 13, Governed: true, HeaderAuth: &SecretRecord{Digest: "d2", ID: 2}}
	require.NoError(t, store.Save(ctx, records), "updated")
	got, err = store.Load(ctx)
	require.NoError(t, err)
	assert.Equal(t, records, got)

	const niceID = "pic-my-cluster-0123456789abcdef"
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "pic-system", Name: AccessRecordPartName("my-cluster", AccessRecordPart(niceID))}, &cm))
	var entry map[string]any
	require.NoError(t, json.Unmarshal([]byte(cm.Data[niceID]), &entry))
	assert.Regexp(t, "^[0-9a-f]{64}$", entry["mac"], "sealed")
	delete(entry, "mac")
	assert.Equal(t, map[string]any{"resourceId": 12.0, "governed": true, "password": map[string]any{"digest": "d1", "id": 4.0}}, entry)
}

// TestForbiddenRecordIsNoRecord: an install whose Role does not grant its record keeps
// direct mode working: the record reads as empty, and only a save would fail.
func TestForbiddenRecordIsNoRecord(t *testing.T) {
	ctx := context.Background()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "pic-access-other", errors.New("not granted"))
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return forbidden
		},
	}).Build()
	store := &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: "pic-system", OwnerID: "other", Key: recordKey(secretKey.Token())}
	got, err := store.Load(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Error(t, store.Save(ctx, map[string]AccessRecord{"pic-other-0123456789abcdef": {Governed: true}}), "a save says what is missing")
}

// TestRecordSurvivesRestartInAConfigMap: the sink saves what it wrote, and a new sink
// reading the same ConfigMap writes no secret again.
func TestRecordSurvivesRestartInAConfigMap(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	shop := ingress("shop", "web")
	w := newWorld(t, accessOrg)
	w.accessRecords = &ConfigMapAccessRecords{Reader: c, Writer: c, Namespace: "pic-system", OwnerID: "default", Key: recordKey(secretKey.Token())}
	w.restart("default")
	rt := protected(web(shop, "app.example.com", 8080), true, everything())
	w.converge(shop, rt)
	secrets := w.fake.SecretWrites()
	w.restart("default")
	o := w.converge(shop, rt)
	assert.Equal(t, secrets, w.fake.SecretWrites())
	assert.Empty(t, o.applied.Updated)

	niceID := w.resourceOn("app.example.com").NiceID
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(w.ctx, client.ObjectKey{Namespace: "pic-system", Name: AccessRecordPartName("default", AccessRecordPart(niceID))}, &cm))
	require.Len(t, cm.Data, 1)
	for _, v := range cm.Data {
		var r AccessRecord
		require.NoError(t, json.Unmarshal([]byte(v), &r))
		assert.True(t, r.Governed)
		require.NotNil(t, r.Password)
		assert.Equal(t, route.NewSecret(route.SecretRef{}, passwordValue).Digest(route.DigestKey(secretKey.Token())), r.Password.Digest)
		assert.NotZero(t, r.Password.ID)
	}
}
