package render

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// derivedDomains are the domains render assumes the org has when it is not told: the
// registrable domain (public suffix plus one label) of every host the objects claim,
// and every domain the domain-name annotation names.
func derivedDomains(ctx context.Context, objects []client.Object, srcs []plugin.Declared) []string {
	var out []string
	add := func(d string) {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, o := range objects {
		for _, src := range srcs {
			if !sameKind(o, src.Object()) {
				continue
			}
			// The hosts as written: without the overrides, which Claims.Hosts applies.
			written := o.DeepCopyObject().(client.Object)
			annotations := maps.Clone(written.GetAnnotations())
			delete(annotations, pic.AnnotationDomainName)
			delete(annotations, pic.AnnotationSubdomain)
			written.SetAnnotations(annotations)
			for _, h := range src.Declaration.Claims.Hosts(ctx, written) {
				_, domain, _ := hostname.Split(strings.TrimPrefix(h, "*."))
				add(domain)
			}
			// As the sources read it; an invalid one is their Warning, not a domain.
			if v, ok := o.GetAnnotations()[pic.AnnotationDomainName]; ok {
				if d, problem := hostname.Normalize(v, ""); problem == nil {
					add(d)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// writeDocuments prints what the sink published as a YAML stream.
func writeDocuments(w io.Writer, documents []any) error {
	for i, d := range documents {
		out, err := yaml.Marshal(d)
		if err != nil {
			return fmt.Errorf("marshal document %d: %w", i+1, err)
		}
		if err := writeDocument(w, i, out); err != nil {
			return err
		}
	}
	return nil
}
