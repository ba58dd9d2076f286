package sources

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// Options are the per-object settings read from PIC's annotations, shared by every source.
type Options struct {
	Enabled       *bool // nil: not set
	Tunnel        string
	Domain        string
	Subdomain     string
	BackendScheme string
	SSO           *bool
	BlockAccess   *bool
	// HealthCheck is nil when the object does not say (the configuration decides);
	// HealthCheckPath, when set, is the explicit path to check, and HealthCheck is true.
	HealthCheck     *bool
	HealthCheckPath string
	// RequiredPolicy names the AccessPolicy the object must be published with
	// (Policies.Require); "" when it names none.
	RequiredPolicy string
}

// ParseOptions reads PIC's annotations. Every invalid value is reported; none is guessed.
func ParseOptions(annotations map[string]string, defaultScheme string) (Options, []string) {
	var (
		o        Options
		problems []string
	)
	boolean := func(key string) *bool {
		v, ok := annotations[key]
		if !ok {
			return nil
		}
		switch strings.TrimSpace(v) {
		case "true":
			t := true
			return &t
		case "false":
			f := false
			return &f
		}
		problems = append(problems, fmt.Sprintf("%s=%q: want \"true\" or \"false\"", key, v))
		return nil
	}
	o.Enabled = boolean(pic.AnnotationEnabled)
	o.SSO = boolean(pic.AnnotationSSO)
	o.BlockAccess = boolean(pic.AnnotationBlockAccess)
	o.Tunnel = strings.TrimSpace(annotations[pic.AnnotationTunnelName])
	o.HealthCheck = boolean(pic.AnnotationHealthCheck)
	if v, ok := annotations[pic.AnnotationHealthCheckPath]; ok {
		path := strings.TrimSpace(v)
		switch {
		case !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t\n"):
			problems = append(problems, fmt.Sprintf("%s=%q: want an absolute path such as /healthz", pic.AnnotationHealthCheckPath, v))
		case o.HealthCheck != nil && !*o.HealthCheck:
			problems = append(problems, fmt.Sprintf("%s=%q with %s=\"false\": remove one of them", pic.AnnotationHealthCheckPath, v, pic.AnnotationHealthCheck))
		default:
			asked := true
			o.HealthCheck, o.HealthCheckPath = &asked, path
		}
	}

	if v, ok := annotations[pic.AnnotationDomainName]; ok {
		if d, problem := hostname.Normalize(v, ""); problem != nil {
			problems = append(problems, fmt.Sprintf("%s=%q: want a domain name such as example.com (%s)", pic.AnnotationDomainName, v, problem.Message))
		} else {
			o.Domain = d
		}
	}
	if v, ok := annotations[pic.AnnotationSubdomain]; ok {
		s := strings.ToLower(strings.Trim(strings.TrimSpace(v), "."))
		if !validSubdomain(s) {
			problems = append(problems, fmt.Sprintf("%s=%q: want one or more DNS labels such as app or api.staging", pic.AnnotationSubdomain, v))
		} else {
			o.Subdomain = s
		}
	}
	if v, ok := annotations[pic.AnnotationRequireAccessPolicy]; ok {
		name := strings.TrimSpace(v)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("%s=%q: want the name of an AccessPolicy in the object's namespace (%s)", pic.AnnotationRequireAccessPolicy, v, strings.Join(errs, "; ")))
		} else {
			o.RequiredPolicy = name
		}
	}
	o.BackendScheme = defaultScheme
	if v, ok := annotations[pic.AnnotationBackendScheme]; ok {
		switch s := strings.ToLower(strings.TrimSpace(v)); s {
		case "http", "https":
			o.BackendScheme = s
		default:
			problems = append(problems, fmt.Sprintf("%s=%q: want http or https", pic.AnnotationBackendScheme, v))
		}
	}
	return o, problems
}

// validSubdomain accepts dot-separated DNS labels.
func validSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// ClaimedHosts are the hosts an object whose annotations are annotations claims for
// hosts (normalized, as written): those users may reach after its domain-name and
// subdomain overrides, whatever the Pangolin org's domains (hostname.Claimable). They
// are the keys of a source's host index, so that an override onto a host another object
// owns meets that object. An invalid override publishes nothing and overrides nothing.
func ClaimedHosts(annotations map[string]string, hosts []string) []string {
	opts, _ := ParseOptions(annotations, "")
	var out []string
	for _, h := range hosts {
		for _, c := range hostname.Claimable(h, opts.Domain, opts.Subdomain) {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}
