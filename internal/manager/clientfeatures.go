package manager

import (
	"os"
	"strconv"
	"sync"

	clientfeatures "k8s.io/client-go/features"
)

// streamedListsVariable is client-go's own switch for its streamed initial lists
// (feature WatchListClient), which PIC honours when it is set.
const streamedListsVariable = "KUBE_FEATURE_" + string(clientfeatures.WatchListClient)

// clientGates are client-go's feature gates as PIC runs them: client-go's defaults,
// except that the caches' initial lists are paged lists rather than streams, unless
// streamedListsVariable says otherwise. Measured on the bench's control plane
// (docs/performance.md), a cache's first sync took about a second whatever the number
// of objects when streamed, and a tenth of that as a list; that second is added to every
// start and every leader take-over. A list may cost the restarted PIC a few MiB more
// at N = 5000 (within the spread of runs), and the API server one response per kind at
// start.
type clientGates struct {
	clientfeatures.Gates
}

func (g clientGates) Enabled(f clientfeatures.Feature) bool {
	if f != clientfeatures.WatchListClient {
		return g.Gates.Enabled(f)
	}
	if v, set := os.LookupEnv(streamedListsVariable); set {
		if on, err := strconv.ParseBool(v); err == nil {
			return on
		}
	}
	return false
}

var setClientGates sync.Once

// useClientGates installs clientGates, before any informer reads them: client-go reads
// a gate when it builds an informer's reflector.
func useClientGates() {
	setClientGates.Do(func() {
		clientfeatures.ReplaceFeatureGates(clientGates{clientfeatures.FeatureGates()})
	})
}
