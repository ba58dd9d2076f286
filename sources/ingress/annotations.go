package ingress

import "github.com/stefb69/pangolin-ingress-controller/sources"

// options are the per-object settings read from annotations.
type options struct {
	enabled       *bool // nil: not set
	tunnel        string
	domain        string
	subdomain     string
	backendScheme string
	sso           *bool
	blockAccess   *bool
	// healthCheck and healthCheckPath: see sources.Options.
	healthCheck     *bool
	healthCheckPath string
	// health derives the object's backends' checks, reading each Service's pods once.
	health sources.HealthChecks
}

// parseOptions reads PIC's annotations on an Ingress (see sources.ParseOptions).
func parseOptions(annotations map[string]string, defaultScheme string) (options, []string) {
	o, problems := sources.ParseOptions(annotations, defaultScheme)
	return options{
		enabled: o.Enabled, tunnel: o.Tunnel, domain: o.Domain, subdomain: o.Subdomain,
		backendScheme: o.BackendScheme, sso: o.SSO, blockAccess: o.BlockAccess,
		healthCheck: o.HealthCheck, healthCheckPath: o.HealthCheckPath,
	}, problems
}
