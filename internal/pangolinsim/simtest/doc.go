// Package simtest serves the Pangolin simulator (internal/pangolinsim) to tests, demos
// and the bench, and adds what a test needs of a server and Pangolin has no part in: a
// loopback listener, faults installed in front of the simulator (outages, dropped
// connections, latency, hangs), and a real server's pace (a service time and a limit of
// requests served at once) with gauges of the load it makes.
//
// The manager binary does not link it: `manager render` runs the simulator alone, in
// memory. The simulator's own tests check both, through the import graph.
package simtest
