package ingress

import (
	"context"
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
)

// annotationDefaultClass marks the cluster's default IngressClass.
const annotationDefaultClass = "ingressclass.kubernetes.io/is-default-class"

// classification is whether PIC manages an Ingress, and the tunnel its class selects.
type classification struct {
	managed bool
	// ours: the Ingress's class is PIC's, whatever the enabled annotation says.
	ours bool
	// alias is the class suffix of pangolin-<alias>; tunnel is a tunnel named by the
	// IngressClass's own tunnel-name annotation.
	alias, tunnel string
}

// classify decides management:
//
//	enabled annotation | class                                        | managed
//	-------------------+----------------------------------------------+--------
//	"false"            | any                                          | no
//	absent             | pangolin, pangolin-<alias>                   | yes
//	absent             | an IngressClass with PIC's controller        | yes
//	absent             | none, and the default IngressClass is PIC's  | yes
//	absent             | anything else                                | no
//	"true"             | any                                          | yes ("also publish through Pangolin")
func (s *Source) classify(ctx context.Context, ing *networkingv1.Ingress, opts options) (classification, error) {
	name := ""
	if ing.Spec.IngressClassName != nil {
		name = *ing.Spec.IngressClassName
	} else if legacy, ok := ing.Annotations[pic.LegacyClassAnnotation]; ok {
		name = legacy
	}
	var c classification
	switch {
	case name == pic.DefaultClassName:
		c.ours = true
	case strings.HasPrefix(name, pic.ClassPrefix) && len(name) > len(pic.ClassPrefix):
		c.ours, c.alias = true, strings.TrimPrefix(name, pic.ClassPrefix)
	default:
		class, err := s.ingressClass(ctx, name)
		if err != nil {
			return c, err
		}
		if class != nil && class.Spec.Controller == pic.ControllerName {
			c.ours = true
			c.tunnel = class.Annotations[pic.AnnotationTunnelName]
			if alias, ok := strings.CutPrefix(class.Name, pic.ClassPrefix); ok {
				c.alias = alias
			}
		}
	}
	switch {
	case opts.Enabled != nil:
		c.managed = *opts.Enabled
	default:
		c.managed = c.ours
	}
	return c, nil
}

// ingressClass returns the named IngressClass, or with an empty name the cluster's
// default one; nil when there is none.
func (s *Source) ingressClass(ctx context.Context, name string) (*networkingv1.IngressClass, error) {
	if name != "" {
		var class networkingv1.IngressClass
		if err := s.client.Get(ctx, types.NamespacedName{Name: name}, &class); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("get IngressClass %s: %w", name, err)
		}
		return &class, nil
	}
	var classes networkingv1.IngressClassList
	if err := s.client.List(ctx, &classes); err != nil {
		return nil, fmt.Errorf("list IngressClasses: %w", err)
	}
	// With several defaults the API server refuses new class-less Ingresses; pick the
	// newest as it does, so an old Ingress keeps a stable answer.
	var chosen *networkingv1.IngressClass
	for i := range classes.Items {
		c := &classes.Items[i]
		if c.Annotations[annotationDefaultClass] != "true" {
			continue
		}
		if chosen == nil || c.CreationTimestamp.After(chosen.CreationTimestamp.Time) {
			chosen = c
		}
	}
	return chosen, nil
}
