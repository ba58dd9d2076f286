// Package pangolinresource is the sink that writes the engine's desired state as
// tunnel.pangolin.io PangolinResource objects, in whichever variant of the operator's CRD
// is installed.
//
// It only ever modifies objects it owns: a controller owner reference to the source
// object and PIC's uid label, both naming the same UID. Anything else is read, never written.
package pangolinresource
