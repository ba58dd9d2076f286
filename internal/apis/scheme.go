// Package apis assembles the scheme of every kind PIC reads or writes.
package apis

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
)

// Scheme has every kind PIC reads or writes, for tests and the golden cases to decode
// with. What PIC runs builds its scheme from the adapters' declarations
// (plugin.Registry.Scheme); builtin/kinds_test.go checks the two know the same kinds.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, tunnelv1alpha1.AddToScheme, accessv1alpha1.AddToScheme, apiextensionsv1.AddToScheme, gatewayv1.Install} {
		if err := add(s); err != nil {
			panic(err) // static registrations: cannot fail
		}
	}
	return s
}
