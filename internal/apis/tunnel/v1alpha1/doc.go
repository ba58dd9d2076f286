// Package v1alpha1 mirrors the parts of pangolin-operator's tunnel.pangolin.io/v1alpha1
// API that PIC reads and writes. The operator owns these CRDs; PIC never installs them.
//
// One set of Go types covers both operator variants: the original CRD has a single
// spec.target, the fork has spec.targets[] and access-control fields. Which fields may be
// written is decided at run time from the installed CRD (see Capabilities), because the
// API server silently prunes fields its schema does not know.
package v1alpha1
