package manifests

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// serviceSource is the name of the source of Services of type LoadBalancer
// (sources/loadbalancer); internal/ imports no adapter, so it is written out here.
const serviceSource = "service"

// servicesRole is the directory under config/rbac of the ClusterRole the service source
// declares.
const servicesRole = "services"

// servicesRoleNameSuffix turns the name of PIC's main ClusterRole into the name of the
// service source's ClusterRole, in config/rbac and in the chart.
const servicesRoleNameSuffix = "-services"

// servicesGrants lists what the rules grant on Services beyond reading them, which only
// the service source needs: any subresource of Services (status, finalizers), and any
// verb but get, list and watch on Services themselves.
func servicesGrants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			if g != corev1.GroupName {
				continue
			}
			for _, res := range r.Resources {
				switch {
				case strings.HasPrefix(res, "services/"):
					out = append(out, fmt.Sprintf("%s %v", res, r.Verbs))
				case res == "services":
					for _, v := range r.Verbs {
						if !slices.Contains([]string{"get", "list", "watch"}, v) {
							out = append(out, fmt.Sprintf("%s %s", res, v))
						}
					}
				}
			}
		}
	}
	return out
}

// TestServicesIsOptIn checks that only the installations that enable the service source
// may write anything of a Service (its status, or the finalizers an owner reference
// needs): config/default, config/direct, the Gateway API overlays and the chart's
// defaults read Services and nothing more. The installations that enable it grant exactly
// the files of config/rbac/services, and config/rbac/pangolinresource/services with that
// sink.
func TestServicesIsOptIn(t *testing.T) {
	servicesRole := readClusterRoleFile(t, "services", "role.yaml")
	sinkRole := readClusterRoleFile(t, "pangolinresource", "services", "role.yaml")
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			cfg, _ := picConfig(t, objs)
			assert.Equal(t, r.sources(), cfg.Sources, "PIC's sources")
			base := only[appsv1.Deployment](t, objs, "Deployment").Name
			role := named(objs, "ClusterRole", "", base+servicesRoleNameSuffix)
			sinkServicesRole := named(objs, "ClusterRole", "", base+"-"+pangolinResourceSink+servicesRoleNameSuffix)
			grants := servicesGrants(allRules(t, objs))
			if !r.services {
				assert.Nil(t, role, "the service source's ClusterRole is in an installation without it")
				assert.Nil(t, sinkServicesRole, "the pangolinresource sink's rule on Services is in an installation without the service source")
				assert.Empty(t, grants, "an installation without the service source grants more than reading Services")
				return
			}
			require.NotNil(t, role, "ClusterRole %s%s", base, servicesRoleNameSuffix)
			assert.Equal(t, ruleSet(servicesRole.Rules), ruleSet(decodeStrict[rbacv1.ClusterRole](t, role).Rules))
			assert.Contains(t, grants, "services/status [patch]", "the service source patches the status of Services")
			if r.direct {
				assert.Nil(t, sinkServicesRole, "the direct sink sets no owner reference on Services")
				assert.NotContains(t, grants, "services/finalizers [update]")
				return
			}
			require.NotNil(t, sinkServicesRole, "ClusterRole %s-%s%s", base, pangolinResourceSink, servicesRoleNameSuffix)
			assert.Equal(t, ruleSet(sinkRole.Rules), ruleSet(decodeStrict[rbacv1.ClusterRole](t, sinkServicesRole).Rules))
			assert.Contains(t, grants, "services/finalizers [update]", "PangolinResources owned by a Service need it")
		})
	}
	t.Run("the check would catch the service source's ClusterRole leaking into config/default", func(t *testing.T) {
		objs := kustomizeBuild(t, repoPath("config", "default"))
		require.Empty(t, servicesGrants(allRules(t, objs)))
		leaked := append(slices.Clone(objs), kustomizeBuild(t, repoPath("config", "rbac", "services"))...)
		assert.NotEmpty(t, servicesGrants(allRules(t, leaked)))
		assert.NotEmpty(t, clusterRoleProblems(t, leaked))
	})
	t.Run("the check would catch a rule on Services added to the main ClusterRole", func(t *testing.T) {
		base := readRoleFile(t).clusterRole
		require.Empty(t, servicesGrants(base))
		for _, rule := range slices.Concat(servicesRole.Rules, sinkRole.Rules,
			[]rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"update"}}}) {
			assert.NotEmpty(t, servicesGrants(append(slices.Clone(base), rule)), "rule %+v", rule)
		}
	})
	t.Run("the service source's rules never update a Service's status: the source patches it", func(t *testing.T) {
		for key, verbs := range ruleSet(servicesRole.Rules) {
			if strings.HasSuffix(key, "services/status") {
				assert.Equal(t, []string{"patch"}, verbs)
			}
		}
	})
}

// TestHelmChartServices checks when the chart renders the service source's ClusterRoles:
// exactly when the configuration PIC loads enables the service source, however it is
// enabled, and the pangolinresource sink's rule on Services only with that sink.
func TestHelmChartServices(t *testing.T) {
	fullname := releaseName + "-pangolin-ingress-controller"
	cases := enablingCases(serviceSource, "httproute")
	for _, sink := range chartSinks {
		for _, c := range cases {
			t.Run(sink.name+" sink, "+c.name, func(t *testing.T) {
				objs := renderChart(t, sink.withSink(t, c.values))
				cfg, _ := picConfig(t, objs)
				require.Equal(t, c.want, slices.Contains(cfg.Sources, serviceSource), "PIC's sources %v", cfg.Sources)
				require.Equal(t, sink.direct, cfg.Sink == directSink, "PIC's sink %s", cfg.Sink)
				assert.Empty(t, clusterRoleProblems(t, objs))
				assert.Equal(t, c.want, named(objs, "ClusterRole", "", fullname+servicesRoleNameSuffix) != nil, "the service source's ClusterRole")
				assert.Equal(t, c.want, named(objs, "ClusterRoleBinding", "", fullname+servicesRoleNameSuffix) != nil, "the service source's ClusterRoleBinding")
				sinkRule := c.want && !sink.direct
				assert.Equal(t, sinkRule, named(objs, "ClusterRole", "", fullname+"-"+pangolinResourceSink+servicesRoleNameSuffix) != nil, "the pangolinresource sink's ClusterRole on Services")
				assert.Equal(t, sinkRule, named(objs, "ClusterRoleBinding", "", fullname+"-"+pangolinResourceSink+servicesRoleNameSuffix) != nil, "the pangolinresource sink's ClusterRoleBinding on Services")
				assert.Equal(t, c.want, len(servicesGrants(allRules(t, objs))) > 0, "rules on Services beyond reading them")
			})
		}
	}

	t.Run("rbac.create=false renders no ClusterRole of the service source", func(t *testing.T) {
		objs := renderChart(t, servicesValues+"rbac: {create: false}")
		assert.Empty(t, ofKind(objs, "ClusterRole"))
		assert.Empty(t, ofKind(objs, "ClusterRoleBinding"))
	})
	t.Run("serviceAccount.create=false binds the service source's ClusterRoles to serviceAccount.name", func(t *testing.T) {
		objs := renderChart(t, servicesValues+"serviceAccount: {create: false, name: existing}")
		for _, name := range []string{fullname + servicesRoleNameSuffix, fullname + "-" + pangolinResourceSink + servicesRoleNameSuffix} {
			o := named(objs, "ClusterRoleBinding", "", name)
			require.NotNil(t, o, name)
			crb := decodeStrict[rbacv1.ClusterRoleBinding](t, o)
			assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "existing", Namespace: releaseNamespace}}, crb.Subjects, name)
		}
	})
}

// mergeValues merges two values files: maps key by key, lists one after the other.
func mergeValues(t *testing.T, a, b string) string {
	t.Helper()
	var ma, mb map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(a), &ma))
	require.NoError(t, yaml.Unmarshal([]byte(b), &mb))
	var merge func(x, y any) any
	merge = func(x, y any) any {
		xm, xok := x.(map[string]any)
		ym, yok := y.(map[string]any)
		if yok && (xok || x == nil) {
			out := map[string]any{}
			maps.Copy(out, xm)
			for k, v := range ym {
				out[k] = merge(xm[k], v)
			}
			return out
		}
		if xl, ok := x.([]any); ok {
			if yl, ok := y.([]any); ok {
				return slices.Concat(xl, yl)
			}
		}
		if x != nil && y != nil {
			require.Failf(t, "values conflict", "%v and %v", x, y)
		}
		if y == nil {
			return x
		}
		return y
	}
	return toYAML(t, merge(ma, mb))
}
