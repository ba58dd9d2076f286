package newt

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Labels and keys of the objects this package writes.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelSite      = "pangolin.io/site"
	LabelOwnerID   = "pangolin.io/owner-id"

	// ManagedBy is the managed-by label's value.
	ManagedBy = "pangolin-ingress-controller"
	// AppName is the name label's value.
	AppName = "newt"

	// SecretKeyID and SecretKeySecret hold the agent's credentials in its Secret, under
	// the names Newt reads them from its environment.
	SecretKeyID     = "NEWT_ID"
	SecretKeySecret = "NEWT_SECRET"
)

// Paths inside the agent's container. The root filesystem is read-only: Newt's health
// file and the configuration file it saves go to a memory volume.
const (
	stateDir   = "/run/newt"
	healthFile = stateDir + "/healthy"
	configFile = stateDir + "/config.json"
	adminPort  = 2112
)

// runAsUser is the agent's user: any id but root; Newt's image sets none.
const runAsUser = 65532

// Agent is one managed site's Newt agent as PIC runs it.
type Agent struct {
	// Namespace is PIC's own namespace.
	Namespace string
	// Site is the site's niceId, which is the tunnel's name.
	Site string
	// OwnerID is PIC's owner id, on the objects' labels.
	OwnerID string
	// Image is the agent's image reference, with a tag or digest.
	Image    string
	Replicas int32
	// Resources are the container's requests and limits.
	Resources corev1.ResourceRequirements
	// Endpoint is the URL Newt connects to: Pangolin's dashboard URL.
	Endpoint string
	// Owner is PIC's own Deployment, whose deletion removes the agent's objects.
	Owner metav1.OwnerReference
}

// Name is the Deployment's and the Secret's name.
func (a Agent) Name() string { return "newt-" + a.Site }

func (a Agent) labels() map[string]string {
	return map[string]string{LabelName: AppName, LabelManagedBy: ManagedBy, LabelSite: a.Site, LabelOwnerID: a.OwnerID}
}

func (a Agent) meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: a.Name(), Namespace: a.Namespace, Labels: a.labels(), OwnerReferences: []metav1.OwnerReference{a.Owner}}
}

// Secret is the agent's Secret holding creds.
func (a Agent) Secret(creds Credentials) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: a.meta(),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{SecretKeyID: []byte(creds.ID), SecretKeySecret: []byte(creds.Secret)},
	}
}

// Deployment is the agent's Deployment. The credentials reach it only from the Secret:
// nothing in the Deployment holds them. Its pod passes the restricted Pod Security
// Standard.
func (a Agent) Deployment() *appsv1.Deployment {
	selector := map[string]string{LabelName: AppName, LabelSite: a.Site, LabelOwnerID: a.OwnerID}
	fromSecret := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: a.Name()}, Key: key}}
	}
	// Every number is set, the API server's defaults included: a zero number would read
	// as a change from what the server stored (the keeper compares with DeepDerivative,
	// which skips only unset pointers, slices, maps and strings).
	probe := func(handler corev1.ProbeHandler, period int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: handler, PeriodSeconds: period, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: 3}
	}
	return &appsv1.Deployment{
		ObjectMeta: a.meta(),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(a.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: a.labels()},
				Spec: corev1.PodSpec{
					// The agent needs no Kubernetes API.
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](runAsUser),
						RunAsGroup:     ptr.To[int64](runAsUser),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  AppName,
						Image: a.Image,
						Env: []corev1.EnvVar{
							{Name: "PANGOLIN_ENDPOINT", Value: a.Endpoint},
							{Name: SecretKeyID, ValueFrom: fromSecret(SecretKeyID)},
							{Name: SecretKeySecret, ValueFrom: fromSecret(SecretKeySecret)},
							{Name: "HEALTH_FILE", Value: healthFile},
							{Name: "CONFIG_FILE", Value: configFile},
							// The admin endpoint answers /healthz, the liveness probe.
							{Name: "NEWT_ADMIN_ADDR", Value: ":" + strconv.Itoa(adminPort)},
							{Name: "NEWT_METRICS_PROMETHEUS_ENABLED", Value: "true"},
						},
						Ports:         []corev1.ContainerPort{{Name: "admin", ContainerPort: adminPort, Protocol: corev1.ProtocolTCP}},
						Resources:     a.Resources,
						LivenessProbe: probe(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("admin")}}, 20),
						// Ready once connected to Pangolin: Newt writes its health file then.
						ReadinessProbe: probe(corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", healthFile}}}, 10),
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "state", MountPath: stateDir}},
					}},
					Volumes: []corev1.Volume{{Name: "state", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}},
				},
			},
		},
	}
}
