package loadbalancer_test

import (
	"testing"

	"github.com/stefb69/pangolin-ingress-controller/render/rendertest"
)

// TestGolden runs every case of testdata/golden, Services of type LoadBalancer, through
// the sources, the engine, the PangolinResource sink and the controller (render.Run),
// once per operator CRD variant; render's own goldens run them in direct mode too.
// go test ./sources/loadbalancer -run TestGolden -update rewrites the expectations.
func TestGolden(t *testing.T) { rendertest.Golden(t, "testdata/golden") }
