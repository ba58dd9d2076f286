package manager

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
)

// checkNamespaceRead fails when policy selects namespaces by labels and PIC may not list
// namespaces. The labels are read from an informer, which without the permission never
// syncs: every reconcile would then fail on the host policy with an error that names
// neither the setting nor the fix. Said once, at start, instead.
func checkNamespaceRead(ctx context.Context, reader client.Reader, policy hostpolicy.Policy) error {
	key := selectorKey(policy)
	if key == "" {
		return nil
	}
	var probe metav1.PartialObjectMetadataList
	probe.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	err := reader.List(ctx, &probe, client.Limit(1))
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s selects namespaces by their labels, so PIC must read namespaces, but it may not list them: grant it get, list and watch on namespaces (the chart grants them when a hostPolicy rule has a namespaceSelector; with kustomize add config/components/host-policy; docs/multi-tenancy.md#rbac), or select the namespaces by name (namespaces: [...]): %w", key, err)
	case err != nil:
		return fmt.Errorf("list namespaces for the hostPolicy's namespaceSelector: %w", err)
	}
	return nil
}

// selectorKey is the configuration key of the first rule of policy that selects
// namespaces by labels, "" when none does.
func selectorKey(policy hostpolicy.Policy) string {
	for i, r := range policy {
		if strings.TrimSpace(r.NamespaceSelector) != "" {
			return fmt.Sprintf("hostPolicy[%d].namespaceSelector", i)
		}
	}
	return ""
}
