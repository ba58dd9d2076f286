package engine

import (
	"fmt"
	"testing"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
)

// benchRoutes are the routes of one Ingress with n hosts, each with a root path and an
// /api path to a second backend (two targets per host with the fork's CRD).
func benchRoutes(n int) []route.Route {
	routes := make([]route.Route, n)
	for i := range routes {
		routes[i] = rt(fmt.Sprintf("app-%d.example.com", i), prefix("/", web), prefix("/api", api))
	}
	return routes
}

func benchInput(n int) Input {
	owner := map[string]route.Origin{}
	for _, r := range benchRoutes(n) {
		owner[r.Host] = prod
	}
	return Input{
		Routes: benchRoutes(n), Features: fork, Defaults: Defaults{SSO: true},
		Owners: owner,
	}
}

// BenchmarkDesired turns the routes of one 50-host Ingress into desired resources.
func BenchmarkDesired(b *testing.B) {
	in := benchInput(50)
	b.ReportAllocs()
	for b.Loop() {
		resources, rejections := Desired(in)
		if len(resources) != 50 || len(rejections) != 0 {
			b.Fatalf("%d resources, %d rejections", len(resources), len(rejections))
		}
	}
}

// BenchmarkDesiredAndCalculate is the engine's share of one reconcile of a 50-host
// Ingress: Desired, then Calculate against nothing (first reconcile: 50 creates),
// against the same resources (steady state: empty plan), and against resources that all
// differ (a backend changed: 50 updates).
func BenchmarkDesiredAndCalculate(b *testing.B) {
	in := benchInput(50)
	desired, _ := Desired(in)
	converged := make([]Existing, len(desired))
	changed := make([]Existing, len(desired))
	for i, d := range desired {
		converged[i] = Existing{Resource: d, UID: "uid"}
		old := d
		old.Targets = []Target{{Backend: web, Path: "/", Match: "prefix", Priority: 101}}
		changed[i] = Existing{Resource: old, UID: "uid"}
	}
	for _, tc := range []struct {
		name     string
		existing []Existing
		creates  int
		updates  int
	}{
		{"50-hosts/none-existing", nil, 50, 0},
		{"50-hosts/converged", converged, 0, 0},
		{"50-hosts/all-changed", changed, 0, 50},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				desired, rejections := Desired(in)
				plan := Calculate(prod, desired, tc.existing, rejections, in.Owners)
				if len(plan.Create) != tc.creates || len(plan.Update) != tc.updates || len(plan.Delete) != 0 {
					b.Fatalf("plan: %d creates, %d updates, %d deletes", len(plan.Create), len(plan.Update), len(plan.Delete))
				}
			}
		})
	}
}

// BenchmarkCalculate is the diff alone for 50 hosts, all converged.
func BenchmarkCalculate(b *testing.B) {
	desired, _ := Desired(benchInput(50))
	existing := make([]Existing, len(desired))
	for i, d := range desired {
		existing[i] = Existing{Resource: d}
	}
	b.ReportAllocs()
	for b.Loop() {
		if plan := Calculate(prod, desired, existing, nil, nil); !plan.Empty() {
			b.Fatal("plan not empty")
		}
	}
}
