package manifests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// gatewayAPIRole is the directory under config/rbac of the ClusterRole the Gateway API
// sources declare.
const gatewayAPIRole = "gateway-api"

// runsGatewayAPI reports whether sources hold a Gateway API source: one that needs
// config/rbac/gateway-api (adapterRoles).
func runsGatewayAPI(sources []string) bool { return needsRole(sources, gatewayAPIRole) }

// gatewayAPIGrants lists what the rules grant that only the Gateway API sources need:
// anything on gateway.networking.k8s.io, and Namespaces.
func gatewayAPIGrants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if g == gatewayv1.GroupName || g == "" && (res == "namespaces" || strings.HasPrefix(res, "namespaces/")) {
					out = append(out, fmt.Sprintf("%s %s %v", g, res, r.Verbs))
				}
			}
		}
	}
	return out
}

// renderedGatewayAPIGrants is gatewayAPIGrants of every Role and ClusterRole rendered,
// but the host policy's ClusterRole: it reads namespaces for its own use, and
// TestHostPolicyNamespacesAreOptIn checks when it is rendered.
func renderedGatewayAPIGrants(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	others := slices.DeleteFunc(slices.Clone(objs), func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "ClusterRole" && strings.HasSuffix(o.GetName(), hostPolicyRoleNameSuffix)
	})
	return gatewayAPIGrants(allRules(t, others))
}

// TestGatewayAPIIsOptIn checks that only the installations that enable the httproute
// source grant anything on Gateway API objects or Namespaces, or create a GatewayClass:
// config/default, the multi-tunnel sample, the service source's installations and the
// chart's default values grant none of it.
func TestGatewayAPIIsOptIn(t *testing.T) {
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			cfg, _ := picConfig(t, objs)
			base := only[appsv1.Deployment](t, objs, "Deployment").Name
			gatewayRole := named(objs, "ClusterRole", "", base+gatewayRoleNameSuffix)
			if !r.gatewayAPI {
				assert.Equal(t, r.sources(), cfg.Sources)
				assert.NotContains(t, cfg.Sources, "httproute")
				assert.Nil(t, gatewayRole, "the Gateway API ClusterRole is in an Ingress-only installation")
				assert.Empty(t, renderedGatewayAPIGrants(t, objs), "an Ingress-only installation grants Gateway API rules")
				assert.Empty(t, ofKind(objs, "GatewayClass"))
				return
			}
			assert.Equal(t, r.sources(), cfg.Sources)
			assert.Contains(t, cfg.Sources, "httproute")
			require.NotNil(t, gatewayRole, "ClusterRole %s%s", base, gatewayRoleNameSuffix)
			assert.Equal(t, ruleSet(readGatewayRoleFile(t).Rules), ruleSet(decodeStrict[rbacv1.ClusterRole](t, gatewayRole).Rules))
			class := named(objs, "GatewayClass", "", "pangolin")
			require.NotNil(t, class, "GatewayClass pangolin")
			assert.Equal(t, pic.GatewayControllerName, string(decodeStrict[gatewayv1.GatewayClass](t, class).Spec.ControllerName))
			assert.Len(t, ofKind(objs, "GatewayClass"), 1)
		})
	}
	t.Run("the check would catch the Gateway API ClusterRole leaking into config/default", func(t *testing.T) {
		objs := kustomizeBuild(t, repoPath("config", "default"))
		require.Empty(t, renderedGatewayAPIGrants(t, objs))
		leaked := append(slices.Clone(objs), kustomizeBuild(t, repoPath("config", "rbac", "gateway-api"))...)
		assert.NotEmpty(t, renderedGatewayAPIGrants(t, leaked))
	})
	t.Run("the check would catch a Gateway API or Namespace rule added to the main ClusterRole", func(t *testing.T) {
		base := readRoleFile(t).clusterRole
		for _, rule := range readGatewayRoleFile(t).Rules {
			assert.NotEmpty(t, gatewayAPIGrants(append(slices.Clone(base), rule)), "rule %+v", rule)
		}
	})
}

// TestHelmChartGatewayAPI checks when the chart renders the Gateway API ClusterRole and
// GatewayClass: exactly when the configuration PIC loads enables a Gateway API source
// (httproute, tcproute, udproute), however it is enabled.
func TestHelmChartGatewayAPI(t *testing.T) {
	fullname := releaseName + "-pangolin-ingress-controller"
	cases := append(enablingCases("httproute", serviceSource),
		sourceCase{"config.sources with tcproute", "config: {sources: [ingress, tcproute]}", true},
		sourceCase{"config.sources with udproute", `config: {sources: "ingress,udproute"}`, true},
		sourceCase{"--sources=… in extraArgs with tcproute", "extraArgs: ['--sources=tcproute']", true},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := renderChart(t, c.values)
			cfg, _ := picConfig(t, objs)
			require.Equal(t, c.want, runsGatewayAPI(cfg.Sources), "PIC's sources %v", cfg.Sources)
			assert.Equal(t, c.want, named(objs, "ClusterRole", "", fullname+gatewayRoleNameSuffix) != nil, "Gateway API ClusterRole")
			assert.Equal(t, c.want, named(objs, "ClusterRoleBinding", "", fullname+gatewayRoleNameSuffix) != nil, "Gateway API ClusterRoleBinding")
			assert.Equal(t, c.want, len(renderedGatewayAPIGrants(t, objs)) > 0, "Gateway API rules")
			assert.Equal(t, c.want, named(objs, "GatewayClass", "", "pangolin") != nil, "GatewayClass pangolin")
		})
	}

	values := []struct {
		name, values string
		check        func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{"gatewayClass.create=false keeps the rules and creates no GatewayClass", gatewayAPIValues + "gatewayClass: {create: false}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "GatewayClass"))
			assert.NotNil(t, named(objs, "ClusterRole", "", fullname+gatewayRoleNameSuffix))
		}},
		{"gatewayClass.name names the GatewayClass", gatewayAPIValues + "gatewayClass: {name: pangolin-public}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Equal(t, []string{"pangolin-public"}, names(ofKind(objs, "GatewayClass")))
		}},
		{"rbac.create=false renders no Gateway API ClusterRole but the GatewayClass", gatewayAPIValues + "rbac: {create: false}", func(t *testing.T, objs []*unstructured.Unstructured) {
			assert.Empty(t, ofKind(objs, "ClusterRole"))
			assert.Empty(t, ofKind(objs, "ClusterRoleBinding"))
			assert.Equal(t, []string{"pangolin"}, names(ofKind(objs, "GatewayClass")))
		}},
		{"serviceAccount.create=false binds the Gateway API ClusterRole to serviceAccount.name", gatewayAPIValues + "serviceAccount: {create: false, name: existing}", func(t *testing.T, objs []*unstructured.Unstructured) {
			crb := decodeStrict[rbacv1.ClusterRoleBinding](t, named(objs, "ClusterRoleBinding", "", fullname+gatewayRoleNameSuffix))
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "existing", Namespace: releaseNamespace}}, crb.Subjects)
		}},
	}
	for _, c := range values {
		t.Run(c.name, func(t *testing.T) { c.check(t, renderChart(t, c.values)) })
	}

	t.Run("gatewayClass.create without a name is refused", func(t *testing.T) {
		_, err := tryRenderChart(gatewayAPIValues + "gatewayClass: {name: ''}")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "gatewayClass.name is required")
	})
}
