package manifests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// healthChecksRoleNameSuffix turns the name of PIC's main ClusterRole into the name of
// the health checks' ClusterRole (list on pods), in config/rbac and in the chart.
const healthChecksRoleNameSuffix = "-health-checks"

// podsGrants lists what the rules grant on pods and their subresources: a pod spec can
// hold environment values, so only an installation that opts into health checks may
// have any.
func podsGrants(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, corev1.GroupName) {
			continue
		}
		for _, res := range r.Resources {
			if res == "pods" || strings.HasPrefix(res, "pods/") {
				out = append(out, fmt.Sprintf("%s %v", res, r.Verbs))
			}
		}
	}
	return out
}

// TestHealthChecksAreOptIn checks that no installation may read pods unless it opts
// into health checks, and that those that do grant exactly config/rbac/health-checks:
// list on pods, what sources/health.go does, and nothing more. An installation that
// turns health checks on for every object must grant it, or each backend would be
// published without its check.
func TestHealthChecksAreOptIn(t *testing.T) {
	roleFile := readClusterRoleFile(t, "health-checks", "role.yaml")
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			objs := r.render(t)
			cfg, _ := picConfig(t, objs)
			base := only[appsv1.Deployment](t, objs, "Deployment").Name
			role := named(objs, "ClusterRole", "", base+healthChecksRoleNameSuffix)
			binding := named(objs, "ClusterRoleBinding", "", base+healthChecksRoleNameSuffix)
			grants := podsGrants(allRules(t, objs))
			if !r.readPods {
				assert.False(t, cfg.HealthChecks, "healthChecks is on in an installation that may not list pods")
				assert.Nil(t, role, "the health checks' ClusterRole is in an installation that does not opt in")
				assert.Nil(t, binding, "the health checks' ClusterRoleBinding is in an installation that does not opt in")
				assert.Empty(t, grants, "an installation that does not opt into health checks grants something on pods")
				return
			}
			require.NotNil(t, role, "ClusterRole %s%s", base, healthChecksRoleNameSuffix)
			require.NotNil(t, binding, "ClusterRoleBinding %s%s", base, healthChecksRoleNameSuffix)
			assert.Equal(t, ruleSet(roleFile.Rules), ruleSet(decodeStrict[rbacv1.ClusterRole](t, role).Rules))
			assert.Equal(t, []string{"pods [list]"}, grants, "what the installation grants on pods")
		})
	}
	t.Run("config/rbac/health-checks grants list on pods, and nothing else", func(t *testing.T) {
		// sources/health.go lists a Service's pods through the API server, with a limit:
		// no informer (watch), no read by name (get), no subresource.
		assert.Equal(t, map[string][]string{"core pods": {"list"}}, ruleSet(roleFile.Rules))
	})
	t.Run("the check would catch the health checks' ClusterRole leaking into config/default", func(t *testing.T) {
		objs := kustomizeBuild(t, repoPath("config", "default"))
		require.Empty(t, podsGrants(allRules(t, objs)))
		leaked := append(slices.Clone(objs), kustomizeBuild(t, repoPath("config", "rbac", "health-checks"))...)
		assert.NotEmpty(t, podsGrants(allRules(t, leaked)))
	})
	t.Run("the check would catch a rule on pods added to the main ClusterRole", func(t *testing.T) {
		base := readRoleFile(t).clusterRole
		require.Empty(t, podsGrants(base))
		for _, rule := range slices.Concat(roleFile.Rules, []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
			{APIGroups: []string{"", "apps"}, Resources: []string{"pods", "deployments"}, Verbs: []string{"watch"}},
		}) {
			assert.NotEmpty(t, podsGrants(append(slices.Clone(base), rule)), "rule %+v", rule)
		}
	})
	t.Run("healthChecks on without the permission is caught", func(t *testing.T) {
		// The component's flag without its RBAC: what an install that forgot the
		// permission renders. PIC loads it, but it may not list pods.
		objs := kustomizedOverlay([]string{"config/direct"}, "config/components/health-checks")(t)
		stripped := objs[:0:0]
		for _, o := range objs {
			if !strings.HasSuffix(o.GetName(), healthChecksRoleNameSuffix) {
				stripped = append(stripped, o)
			}
		}
		cfg, _ := picConfig(t, stripped)
		require.True(t, cfg.HealthChecks)
		assert.Contains(t, clusterRoleProblems(t, stripped), "ClusterRole pangolin-ingress-controller-health-checks is not rendered")
	})
}

// TestHelmChartHealthChecks checks when the chart grants list on pods: exactly when the
// configuration PIC loads turns health checks on, however it is turned on, or when
// rbac.readPods asks for it.
func TestHelmChartHealthChecks(t *testing.T) {
	fullname := releaseName + "-pangolin-ingress-controller"
	cases := []struct {
		name, values       string
		healthChecks, role bool
	}{
		{"the default values read no pods", "", false, false},
		{"config.healthChecks: true", "config: {healthChecks: true}", true, true},
		{"config.healthChecks: false", "config: {healthChecks: false}", false, false},
		{"rbac.readPods alone grants it and leaves health checks off", "rbac: {readPods: true}", false, true},
		{"rbac.readPods: false with config.healthChecks grants it", "{config: {healthChecks: true}, rbac: {readPods: false}}", true, true},
		{"--health-checks in extraArgs", "extraArgs: [--health-checks]", true, true},
		{"--health-checks=true in extraArgs", "extraArgs: [--health-checks=true]", true, true},
		{"--health-checks=1 in extraArgs", "extraArgs: [--health-checks=1]", true, true},
		{"--health-checks=false in extraArgs beats config.healthChecks", "{config: {healthChecks: true}, extraArgs: [--health-checks=false]}", false, false},
		{"the last --health-checks wins", "extraArgs: [--health-checks, --health-checks=false]", false, false},
		{"PIC_HEALTH_CHECKS in extraEnv", "extraEnv: [{name: PIC_HEALTH_CHECKS, value: 'true'}]", true, true},
		{"PIC_HEALTH_CHECKS=false in extraEnv beats config.healthChecks", "{config: {healthChecks: true}, extraEnv: [{name: PIC_HEALTH_CHECKS, value: 'false'}]}", false, false},
		{"an empty PIC_HEALTH_CHECKS is unset", "{config: {healthChecks: true}, extraEnv: [{name: PIC_HEALTH_CHECKS, value: ''}]}", true, true},
		{"--health-checks in extraArgs beats PIC_HEALTH_CHECKS", "{extraArgs: [--health-checks], extraEnv: [{name: PIC_HEALTH_CHECKS, value: 'false'}]}", true, true},
		{"rbac.readPods with health checks turned off by a flag", "{rbac: {readPods: true}, config: {healthChecks: true}, extraArgs: [--health-checks=false]}", false, true},
	}
	for _, sink := range chartSinks {
		for _, c := range cases {
			t.Run(sink.name+" sink, "+c.name, func(t *testing.T) {
				objs := renderChart(t, sink.withSink(t, c.values))
				cfg, _ := picConfig(t, objs)
				require.Equal(t, c.healthChecks, cfg.HealthChecks, "PIC's healthChecks")
				require.Equal(t, sink.direct, cfg.Sink == directSink, "PIC's sink %s", cfg.Sink)
				assert.Empty(t, clusterRoleProblems(t, objs))
				assert.Equal(t, c.role, named(objs, "ClusterRole", "", fullname+healthChecksRoleNameSuffix) != nil, "the health checks' ClusterRole")
				assert.Equal(t, c.role, named(objs, "ClusterRoleBinding", "", fullname+healthChecksRoleNameSuffix) != nil, "the health checks' ClusterRoleBinding")
				assert.Equal(t, c.role, len(podsGrants(allRules(t, objs))) > 0, "rules on pods")
			})
		}
	}

	t.Run("rbac.create=false renders no ClusterRole of the health checks", func(t *testing.T) {
		objs := renderChart(t, "config: {healthChecks: true}\nrbac: {create: false, readPods: true}")
		assert.Empty(t, ofKind(objs, "ClusterRole"))
		assert.Empty(t, ofKind(objs, "ClusterRoleBinding"))
	})
	t.Run("serviceAccount.create=false binds the health checks' ClusterRole to serviceAccount.name", func(t *testing.T) {
		objs := renderChart(t, "rbac: {readPods: true}\nserviceAccount: {create: false, name: existing}")
		o := named(objs, "ClusterRoleBinding", "", fullname+healthChecksRoleNameSuffix)
		require.NotNil(t, o)
		crb := decodeStrict[rbacv1.ClusterRoleBinding](t, o)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "existing", Namespace: releaseNamespace}}, crb.Subjects)
	})
}
