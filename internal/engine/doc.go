// Package engine turns the routes of one source object into the PangolinResources that
// should exist for it (Desired), and compares them with what exists (Calculate).
//
// It is pure logic: no Kubernetes client, no I/O, no clock. Everything it needs to know
// about the cluster (what the installed CRD can express, who owns a contested host)
// comes in as values, so every decision is a table test.
package engine
