package manager

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stefb69/pangolin-ingress-controller/internal/apis"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
)

// TestNamespaceReadIsCheckedForSelectors: a hostPolicy that selects namespaces by labels
// stops start-up, naming the rule and the fix, when PIC may not list namespaces; one
// that names namespaces needs no such right and is not checked.
func TestNamespaceReadIsCheckedForSelectors(t *testing.T) {
	byName := hostpolicy.Rule{Namespaces: []string{"team-a"}, Hosts: []string{"*.team-a.example.com"}}
	bySelector := hostpolicy.Rule{NamespaceSelector: "tenant=shop", Hosts: []string{"shop.example.com"}}
	blank := hostpolicy.Rule{Namespaces: []string{"team-b"}, NamespaceSelector: "  ", Hosts: []string{"b.example.com"}}
	cases := []struct {
		name      string
		policy    hostpolicy.Policy
		forbidden bool
		wantList  bool
		wantErr   []string
	}{
		{name: "no host policy reads no namespace", policy: nil, forbidden: true},
		{name: "rules by namespace names read no namespace", policy: hostpolicy.Policy{byName}, forbidden: true},
		{name: "a blank selector selects none and reads no namespace", policy: hostpolicy.Policy{blank}, forbidden: true},
		{name: "a selector with the right to list namespaces starts", policy: hostpolicy.Policy{byName, bySelector}, wantList: true},
		{name: "a selector without the right to list namespaces stops start-up, naming the key and the fix",
			policy: hostpolicy.Policy{byName, bySelector}, forbidden: true, wantList: true,
			wantErr: []string{"hostPolicy[1].namespaceSelector", "may not list them", "get, list and watch on namespaces", "config/components/host-policy", "namespaces: [...]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			listed := false
			reader := fake.NewClientBuilder().WithScheme(apis.Scheme()).
				WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					listed = true
					if c.forbidden {
						return apierrors.NewForbidden(corev1.Resource("namespaces"), "", nil)
					}
					return cl.List(ctx, list, opts...)
				}}).Build()
			err := checkNamespaceRead(context.Background(), reader, c.policy)
			assert.Equal(t, c.wantList, listed, "namespaces listed")
			if len(c.wantErr) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, want := range c.wantErr {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}
