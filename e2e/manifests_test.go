package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/stefb69/pangolin-ingress-controller/internal/testenv"
	pangolinsink "github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
)

// fieldOwner is the suite's server-side apply field manager.
const fieldOwner = client.FieldOwner("pic-e2e")

// hasKustomization reports whether dir holds a kustomization.
func hasKustomization(dir string) bool {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// kustomize renders dir with the kustomize Go API (the same engine as kubectl -k). If
// namespace is not empty, dir is rendered through an overlay that sets it, as a
// deployment's own overlay would.
func kustomize(dir, namespace string) ([]*unstructured.Unstructured, error) {
	target := dir
	if namespace != "" {
		overlay, err := os.MkdirTemp("", "pic-e2e-overlay-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(overlay)
		rel, err := filepath.Rel(overlay, dir)
		if err != nil {
			return nil, err
		}
		k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - %s\n", namespace, rel)
		if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o600); err != nil {
			return nil, err
		}
		target = overlay
	}
	return build(target, dir)
}

// build runs kustomize on target; name is what errors call it.
func build(target, name string) ([]*unstructured.Unstructured, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), target)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", name, err)
	}
	data, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", name, err)
	}
	return testenv.DecodeYAML(data)
}

// rbacKinds are the kinds of an install that make up PIC's RBAC.
var rbacKinds = []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// accessRBACObjects is the RBAC of a direct-mode install with access policies and the
// Gateway API: config/direct-gateway-api with the component
// config/components/access-policies, as docs/access-control.md installs it, rendered
// through an overlay that names the access record's Role after ownerID, which is the
// edit config/rbac/direct/role.yaml asks for (EDIT). Only the RBAC objects: the
// Deployment does not run here, and the CRD comes with the cluster
// (testenv.ClusterOptions.AccessPolicies).
func accessRBACObjects(ownerID string) ([]*unstructured.Unstructured, error) {
	recordParts := func(ownerID string) string {
		names := make([]string, pangolinsink.AccessRecordParts)
		for n := range names {
			names[n] = pangolinsink.AccessRecordPartName(ownerID, n)
		}
		return strings.Join(names, ", ")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	overlay, err := os.MkdirTemp("", "pic-e2e-overlay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(overlay)
	rel := func(dir string) (string, error) { return filepath.Rel(overlay, filepath.Join(root, "config", dir)) }
	install, err := rel("direct-gateway-api")
	if err != nil {
		return nil, err
	}
	component, err := rel(filepath.Join("components", "access-policies"))
	if err != nil {
		return nil, err
	}
	// The test operation fails the render if the shipped Role no longer names the
	// placeholder: the edit would then silently grant something else.
	k := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %s
components:
  - %s
patches:
  - target: {kind: Role, name: pangolin-ingress-controller-access-record}
    patch: |-
      - op: test
        path: /rules/0/resourceNames
        value: [%s]
      - op: replace
        path: /rules/0/resourceNames
        value: [%s]
      - op: test
        path: /rules/1/resourceNames
        value: [pic-access-my-cluster]
      - op: replace
        path: /rules/1/resourceNames
        value: [pic-access-%s]
`, install, component, recordParts("my-cluster"), recordParts(ownerID), ownerID)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		return nil, err
	}
	objs, err := build(overlay, "config/direct-gateway-api with config/components/access-policies")
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return !slices.Contains(rbacKinds, o.GetKind()) }), nil
}

// applyObjects server-side applies objects in order, creating namespaces first.
func applyObjects(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, pass := range []bool{true, false} {
		for _, obj := range objs {
			if (obj.GetKind() == "Namespace") != pass {
				continue
			}
			obj = obj.DeepCopy()
			obj.SetManagedFields(nil)
			obj.SetResourceVersion("")
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), fieldOwner, client.ForceOwnership); err != nil {
				return fmt.Errorf("apply %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
		}
	}
	return nil
}

// ensureNamespace creates a namespace if it does not exist.
func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// serviceAccountIdentity is PIC's identity as the rendered RBAC sees it: the rendered
// ServiceAccount, else the first ServiceAccount subject of a binding, else the default.
func serviceAccountIdentity(objs []*unstructured.Unstructured) (namespace, name string) {
	for _, o := range objs {
		if o.GetKind() == "ServiceAccount" {
			return o.GetNamespace(), o.GetName()
		}
	}
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			m, _ := s.(map[string]any)
			if m["kind"] == "ServiceAccount" {
				ns, _ := m["namespace"].(string)
				n, _ := m["name"].(string)
				if ns == "" {
					ns = o.GetNamespace()
				}
				return ns, n
			}
		}
	}
	return picNamespace, "pangolin-ingress-controller"
}

// rbacObjects is PIC's RBAC for the local provider with sink (pangolinresource or
// pangolin, the direct sink), rendered with kustomize into picNamespace: config/rbac and,
// for the pangolinresource sink, config/rbac/pangolinresource (what an Ingress-only
// install of that sink grants); and the opt-in sources' rules, bound to the same
// ServiceAccount: config/rbac/gateway-api (httproute, tcproute, udproute) and
// config/rbac/services (service), with config/rbac/pangolinresource/gateway-api and
// config/rbac/pangolinresource/services for the pangolinresource sink. The direct
// sink's are config/rbac with config/rbac/direct (its access record's Role), and the
// opt-in sources', as config/direct, config/direct-gateway-api and the services
// Component install.
func rbacObjects(sink string) (ingress, gatewayAPI []*unstructured.Unstructured, err error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	rbac := filepath.Join(root, "config", "rbac")
	ingressDirs, gatewayDirs := []string{rbac}, []string{filepath.Join(rbac, "gateway-api"), filepath.Join(rbac, "services")}
	switch sink {
	case "pangolinresource":
		ingressDirs = append(ingressDirs, filepath.Join(rbac, "pangolinresource"))
		gatewayDirs = append(gatewayDirs, filepath.Join(rbac, "pangolinresource", "gateway-api"), filepath.Join(rbac, "pangolinresource", "services"))
	case "pangolin":
		// The direct spec asks for health checks: list on pods, as the health-checks
		// Component grants.
		ingressDirs = append(ingressDirs, filepath.Join(rbac, "direct"), filepath.Join(rbac, "health-checks"))
	}
	render := func(dirs []string) ([]*unstructured.Unstructured, error) {
		var out []*unstructured.Unstructured
		for _, dir := range dirs {
			objs, err := kustomize(dir, picNamespace)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	if ingress, err = render(ingressDirs); err != nil {
		return nil, nil, err
	}
	gatewayAPI, err = render(gatewayDirs)
	return ingress, gatewayAPI, err
}

// rebound is the same grants as the bindings among objs, for another ServiceAccount of
// namespace: bindings named after it, with it as their only subject.
func rebound(objs []*unstructured.Unstructured, namespace, serviceAccount string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		b := o.DeepCopy()
		b.SetName(o.GetName() + "-" + serviceAccount)
		b.SetResourceVersion("")
		subjects := []any{map[string]any{"kind": "ServiceAccount", "name": serviceAccount, "namespace": namespace}}
		if err := unstructured.SetNestedSlice(b.Object, subjects, "subjects"); err != nil {
			panic(err) // a literal slice of maps: cannot fail
		}
		out = append(out, b)
	}
	return out
}

// installCRDs creates (or updates) the CRDs in files and waits until they are
// established.
func installCRDs(ctx context.Context, c client.Client, files []string) ([]string, error) {
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		o, err := testenv.DecodeYAML(data)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		objs = append(objs, o...)
	}
	if err := applyObjects(ctx, c, objs); err != nil {
		return nil, err
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: o.GetName()}, &crd); err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, fmt.Errorf("wait for CRD %s to be established: %w", o.GetName(), err)
		}
	}
	return names, nil
}
