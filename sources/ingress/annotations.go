package ingress

import (
	"fmt"
	"strings"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// options are the per-object settings read from annotations.
type options struct {
	enabled       *bool // nil: not set
	tunnel        string
	domain        string
	subdomain     string
	backendScheme string
	sso           *bool
	blockAccess   *bool
}

// parseOptions reads PIC's annotations. Every invalid value is reported; none is guessed.
func parseOptions(annotations map[string]string, defaultScheme string) (options, []string) {
	var (
		o        options
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
	o.enabled = boolean(pic.AnnotationEnabled)
	o.sso = boolean(pic.AnnotationSSO)
	o.blockAccess = boolean(pic.AnnotationBlockAccess)
	o.tunnel = strings.TrimSpace(annotations[pic.AnnotationTunnelName])

	if v, ok := annotations[pic.AnnotationDomainName]; ok {
		if d, problem := hostname.Normalize(v, ""); problem != nil {
			problems = append(problems, fmt.Sprintf("%s=%q: want a domain name such as example.com (%s)", pic.AnnotationDomainName, v, problem.Message))
		} else {
			o.domain = d
		}
	}
	if v, ok := annotations[pic.AnnotationSubdomain]; ok {
		s := strings.ToLower(strings.Trim(strings.TrimSpace(v), "."))
		if !validSubdomain(s) {
			problems = append(problems, fmt.Sprintf("%s=%q: want one or more DNS labels such as app or api.staging", pic.AnnotationSubdomain, v))
		} else {
			o.subdomain = s
		}
	}
	o.backendScheme = defaultScheme
	if v, ok := annotations[pic.AnnotationBackendScheme]; ok {
		switch s := strings.ToLower(strings.TrimSpace(v)); s {
		case "http", "https":
			o.backendScheme = s
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
