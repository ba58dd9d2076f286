package ingress

import "github.com/stefb69/pangolin-ingress-controller/sources"

// options are an Ingress's annotations (sources.Options), with what its backends share
// while one Ingress is read.
type options struct {
	sources.Options
	// health derives the Ingress's backends' checks, reading each Service's pods once.
	health sources.HealthChecks
}

// parseOptions reads PIC's annotations on an Ingress (see sources.ParseOptions).
func parseOptions(annotations map[string]string, defaultScheme string) (options, []string) {
	o, problems := sources.ParseOptions(annotations, defaultScheme)
	return options{Options: o}, problems
}
