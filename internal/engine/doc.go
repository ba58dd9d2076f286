// Package engine turns the routes of one source object into the Pangolin resources that
// should exist for it (Desired), and compares them with what exists (Calculate). Its
// types are the sinks' common model: the pangolinresource sink writes them as
// PangolinResources for the operator, the pangolin sink (direct mode) as resources of
// Pangolin's Integration API.
//
// It is pure logic: no Kubernetes client, no I/O, no clock. Everything it needs to know
// about the cluster (what the sink can express, who owns a contested host) comes in as
// values, so every decision is a table test.
package engine
