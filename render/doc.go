// Package render runs PIC without a cluster: the configured sources, the engine and the
// configured sink (PangolinResources, or the direct sink against the in-memory Pangolin
// server), driven by controller.Reconciler over a fake client that holds manifests.
// `manager render` (Main) and the golden tests of the sources use it, so that what they
// show is what the controller computes. It writes nothing anywhere but into its fake
// client and its in-memory Pangolin; it is not a second implementation of any rule.
package render
