package ingress_test

import (
	"testing"

	"github.com/stefb69/pangolin-ingress-controller/render/rendertest"
)

// TestGolden runs every case of testdata/golden, an Ingress translation, through the
// sources, the engine, the PangolinResource sink and the controller (render.Run), once
// per operator CRD variant. go test ./sources/ingress -run TestGolden -update rewrites
// the expectations.
func TestGolden(t *testing.T) { rendertest.Golden(t, "testdata/golden") }
