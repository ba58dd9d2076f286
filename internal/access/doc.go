// Package access decides what an AccessPolicy means for a host: which policy applies to
// an Ingress, an HTTPRoute or a Gateway's routes (Attach), what each policy reports in
// its status (Ancestors), and the host's effective access in Pangolin's terms, merged
// with the sso/block-access annotations, or why it cannot be applied (Resolve).
//
// It is pure: it takes the policies, the Secrets' data and the targets' existence as
// facts, and never reads the cluster or Pangolin. It fails closed: anything it cannot
// apply as written is a refusal, never a weaker access.
package access
