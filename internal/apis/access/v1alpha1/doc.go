// Package v1alpha1 is PIC's own AccessPolicy API (pic.pangolin.io/v1alpha1): who may reach
// the hosts that an Ingress, an HTTPRoute or a Gateway publishes. A policy is attached to
// what it protects through spec.targetRefs, as Gateway API's policy attachment (GEP-713)
// describes, and reports per target in status.ancestors.
//
// PIC owns this CRD: config/crd/pic holds what controller-gen writes from these types
// (make generate), and DeepCopy methods are generated into zz_generated.deepcopy.go;
// make generate-check fails when either is out of date. What a policy means for a host
// is decided by internal/access, not here: these types only carry what users write.
//
// +kubebuilder:object:generate=true
// +groupName=pic.pangolin.io
package v1alpha1
