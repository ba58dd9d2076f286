// Package controller is the controller-runtime glue: one generic reconciler per source
// kind that reads routes from the source, checks their tunnels, asks the engine for the
// desired state and the plan, lets the sink apply it, and reports what happened as
// events, logs and metrics. Decisions belong to the engine, not here.
package controller
