package access_test

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/access"
	accessv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/access/v1alpha1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// policy is an AccessPolicy in namespace shop created age minutes after epoch, with
// the spec edit gives it.
func policy(name string, minute int, edit func(*accessv1alpha1.AccessPolicySpec), refs ...gatewayv1.LocalPolicyTargetReference) accessv1alpha1.AccessPolicy {
	p := accessv1alpha1.AccessPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: name, Generation: 3,
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(minute) * time.Minute)),
		},
		Spec: accessv1alpha1.AccessPolicySpec{TargetRefs: refs},
	}
	if edit != nil {
		edit(&p.Spec)
	}
	return p
}

func ingressRef(name string) gatewayv1.LocalPolicyTargetReference {
	return gatewayv1.LocalPolicyTargetReference{Group: accessv1alpha1.GroupIngress, Kind: accessv1alpha1.KindIngress, Name: gatewayv1.ObjectName(name)}
}

func routeRef(name string) gatewayv1.LocalPolicyTargetReference {
	return gatewayv1.LocalPolicyTargetReference{Group: accessv1alpha1.GroupGateway, Kind: accessv1alpha1.KindHTTPRoute, Name: gatewayv1.ObjectName(name)}
}

func gatewayRef(name string) gatewayv1.LocalPolicyTargetReference {
	return gatewayv1.LocalPolicyTargetReference{Group: accessv1alpha1.GroupGateway, Kind: accessv1alpha1.KindGateway, Name: gatewayv1.ObjectName(name)}
}

func ingress(name string) access.Target {
	return access.Target{Kind: accessv1alpha1.KindIngress, Namespace: "shop", Name: name}
}

func httpRoute(name string) access.Target {
	return access.Target{Kind: accessv1alpha1.KindHTTPRoute, Namespace: "shop", Name: name}
}

func gateway(name string) access.Target {
	return access.Target{Kind: accessv1alpha1.KindGateway, Namespace: "shop", Name: name}
}

func ptr[T any](v T) *T { return &v }
