package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// namedSource is a source that declares only controllers of the given names.
type namedSource struct {
	name        string
	controllers []string
}

var _ plugin.Source = namedSource{}

func (s namedSource) Name() string          { return s.name }
func (s namedSource) Object() client.Object { return &networkingv1.Ingress{} }
func (s namedSource) Routes(context.Context, client.Object) (plugin.Result, error) {
	return plugin.Result{}, nil
}
func (s namedSource) WriteStatus(context.Context, client.Object, plugin.Status) error {
	return nil
}
func (s namedSource) Declare() plugin.Declaration {
	return plugin.Declaration{Controllers: controllersNamed(s.controllers...)}
}

func controllersNamed(names ...string) []plugin.Controller {
	out := make([]plugin.Controller, len(names))
	for i, name := range names {
		out[i] = plugin.Controller{Name: name}
	}
	return out
}

func TestControllers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deps    Deps
		want    []string
		wantErr string
	}{
		{
			name: "sources' controllers come first, then the shared parts', in order",
			deps: Deps{
				Sources: plugin.DeclareAll(
					namedSource{name: "ingress"},
					namedSource{name: "httproute", controllers: []string{"a", "b"}},
				),
				SharedParts: []plugin.SharedDeclaration{
					{Controllers: controllersNamed("accesspolicy")},
					{Controllers: controllersNamed("gateway", "gatewayclass")},
				},
			},
			want: []string{"a", "b", "accesspolicy", "gateway", "gatewayclass"},
		},
		{
			name: "a controller two sources declare is declared twice",
			deps: Deps{Sources: plugin.DeclareAll(
				namedSource{name: "httproute", controllers: []string{"gateway"}},
				namedSource{name: "tcproute", controllers: []string{"gateway"}},
			)},
			wantErr: "the gateway controller is declared twice",
		},
		{
			name: "a controller a source and a shared part declare is declared twice",
			deps: Deps{
				Sources:     plugin.DeclareAll(namedSource{name: "httproute", controllers: []string{"gateway"}}),
				SharedParts: []plugin.SharedDeclaration{{Controllers: controllersNamed("gateway")}},
			},
			wantErr: "the gateway controller is declared twice",
		},
		{
			name: "a controller two shared parts declare is declared twice",
			deps: Deps{SharedParts: []plugin.SharedDeclaration{
				{Controllers: controllersNamed("accesspolicy")},
				{Controllers: controllersNamed("accesspolicy")},
			}},
			wantErr: "the accesspolicy controller is declared twice",
		},
		{
			name: "a controller named as a source is declared twice",
			deps: Deps{
				Sources:     plugin.DeclareAll(namedSource{name: "ingress"}),
				SharedParts: []plugin.SharedDeclaration{{Controllers: controllersNamed("ingress")}},
			},
			wantErr: "the ingress controller is declared twice",
		},
		{
			name:    "two sources of one name are declared twice",
			deps:    Deps{Sources: plugin.DeclareAll(namedSource{name: "ingress"}, namedSource{name: "ingress"})},
			wantErr: "the ingress controller is declared twice",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.deps.Controllers()
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				assert.Nil(t, got)
				return
			}
			assert.NoError(t, err)
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			assert.Equal(t, tc.want, names)
		})
	}
}
