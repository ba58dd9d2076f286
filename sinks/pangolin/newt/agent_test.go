package newt_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/newt"
)

var testAgent = newt.Agent{
	Namespace: "pic-system", Site: "edge", OwnerID: "cluster-a",
	Image: "docker.io/fosrl/newt:1.15.0", Replicas: 2, Endpoint: "https://pangolin.example.com",
	Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
	},
	Owner: metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "pangolin-ingress-controller", UID: "uid-1", Controller: ptr.To(true)},
}

const testSecret = "s3cr3t-newt-secret-value-0123456789abcdefghijklmn"

func TestAgentPassesTheRestrictedPodSecurityStandard(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	d := testAgent.Deployment()
	for _, version := range []api.Version{api.LatestVersion(), api.MajorMinorVersion(1, 25)} {
		result := policy.AggregateCheckResults(evaluator.EvaluatePod(
			api.LevelVersion{Level: api.LevelRestricted, Version: version}, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec))
		assert.True(t, result.Allowed, "restricted %s: %s", version, result.ForbiddenDetail())
	}
}

func TestAgentPodSecurityCheckCanFail(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	d := testAgent.Deployment()
	d.Spec.Template.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	result := policy.AggregateCheckResults(evaluator.EvaluatePod(
		api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}, &d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec))
	assert.False(t, result.Allowed, "the check sees a container that may escalate")
}

func TestAgentDeployment(t *testing.T) {
	d := testAgent.Deployment()
	assert.Equal(t, "newt-edge", d.Name)
	assert.Equal(t, "pic-system", d.Namespace)
	assert.Equal(t, []metav1.OwnerReference{testAgent.Owner}, d.OwnerReferences, "PIC's Deployment owns it, so uninstalling removes it")
	assert.Equal(t, int32(2), *d.Spec.Replicas)
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "docker.io/fosrl/newt:1.15.0", c.Image)
	assert.NotNil(t, c.LivenessProbe)
	assert.NotNil(t, c.ReadinessProbe)
	assert.Equal(t, testAgent.Resources, c.Resources, "the configured requests and limits")
	assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	assert.Equal(t, "https://pangolin.example.com", env["PANGOLIN_ENDPOINT"].Value)
	for _, key := range []string{newt.SecretKeyID, newt.SecretKeySecret} {
		require.NotNil(t, env[key].ValueFrom, key)
		assert.Equal(t, &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "newt-edge"}, Key: key}, env[key].ValueFrom.SecretKeyRef, "%s comes from the Secret", key)
	}
	assert.Equal(t, d.Spec.Selector.MatchLabels, subset(d.Spec.Template.Labels, d.Spec.Selector.MatchLabels), "the selector selects the pods")
}

func TestCredentialsStayInTheSecret(t *testing.T) {
	creds := newt.Credentials{ID: "abcdefghijklmno", Secret: testSecret}
	s := testAgent.Secret(creds)
	assert.Equal(t, testSecret, string(s.Data[newt.SecretKeySecret]))
	assert.Equal(t, []metav1.OwnerReference{testAgent.Owner}, s.OwnerReferences)

	deployment, err := json.Marshal(testAgent.Deployment())
	require.NoError(t, err)
	assert.NotContains(t, string(deployment), testSecret)
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, sprintf(format, creds), testSecret, format)
	}
}

func subset(all, keys map[string]string) map[string]string {
	out := map[string]string{}
	for k := range keys {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}
