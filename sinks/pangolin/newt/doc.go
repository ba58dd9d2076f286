// Package newt keeps the Newt agent of a managed site running beside PIC: a Deployment
// and the Secret holding the agent's credentials, in PIC's own namespace, owned by PIC's
// Deployment. It knows Kubernetes, not Pangolin: the site itself is the pangolin sink's.
// It must never log, return or record a credential.
package newt
