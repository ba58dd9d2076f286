// Package builtin is PIC's composition root: the one place that names the concrete
// sources and sinks, by the names configuration uses. A new source or sink is its own
// package under sources/ or sinks/ and one line here: the manager and `manager render`
// both build what they run from this registry (docs/development.md).
package builtin

import (
	"maps"
	"slices"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolinresource"
	"github.com/stefb69/pangolin-ingress-controller/sources/gatewayapi"
	"github.com/stefb69/pangolin-ingress-controller/sources/ingress"
	"github.com/stefb69/pangolin-ingress-controller/sources/loadbalancer"
)

// Registry is every source and sink this build can run.
var Registry = plugin.Registry{
	Sources: map[string]plugin.SourceFactory{
		ingress.Name:            ingress.Factory,
		gatewayapi.Name:         gatewayapi.Factory,
		gatewayapi.TCPRouteName: gatewayapi.TCPRouteFactory,
		gatewayapi.UDPRouteName: gatewayapi.UDPRouteFactory,
		loadbalancer.Name:       loadbalancer.Factory,
	},
	Sinks: map[string]plugin.SinkFactory{
		pangolinresource.Name: pangolinresource.Factory,
		pangolin.Name:         pangolin.Factory,
	},
}

// SourceNames are the registered sources' names, sorted.
func SourceNames() []string { return slices.Sorted(maps.Keys(Registry.Sources)) }

// SinkNames are the registered sinks' names, sorted.
func SinkNames() []string { return slices.Sorted(maps.Keys(Registry.Sinks)) }

// Names are the registered names, for the configuration to accept these and no others.
func Names() config.Plugins { return config.Plugins{Sources: SourceNames(), Sinks: SinkNames()} }
