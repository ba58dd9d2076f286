package pangolin

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
)

// Options configure the sink.
type Options struct {
	// URL is the Integration API's base URL including /v1.
	URL string
	// Org is the Pangolin organization PIC publishes into.
	Org string
	// APIKey is the bearer token "<apiKeyId>.<secret>". Printing Options never shows it.
	APIKey string
	// OwnerID marks what this PIC creates (niceId "pic-<OwnerID>-..."): PICs of several
	// clusters sharing one org need different ones.
	OwnerID string
	// CAPEM, when set, are the only CAs trusted for the URL's TLS.
	CAPEM []byte
	// ResyncPeriod is how often the sink reads again the resources it owns in Pangolin
	// as the list shows them, and whole those whose list item changed.
	ResyncPeriod time.Duration
	// DriftPeriod is how often it reads every one of them whole, to find the edits the
	// list does not show.
	DriftPeriod time.Duration
	// MaxConcurrentReads bounds the reads of a refresh in flight at once.
	MaxConcurrentReads int
	// AccessRecords keeps what access policies wrote across restarts; nil keeps it in
	// memory. Its digests are keyed with route.DigestKey(APIKey).
	AccessRecords AccessRecordStore
	// Managed are the sites PIC creates and whose agents it runs; nil for none.
	Managed *ManagedSites
}

// DefaultOwnerID is the owner id of a PIC that was given none.
const DefaultOwnerID = "default"

// Defaults for the zero values of Options.ResyncPeriod, DriftPeriod and
// MaxConcurrentReads.
const (
	DefaultResyncPeriod       = 5 * time.Minute
	DefaultDriftPeriod        = time.Hour
	DefaultMaxConcurrentReads = 4
)

// String describes the options without the API key.
func (o Options) String() string {
	key := ""
	if o.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("pangolin.Options{URL:%q Org:%q APIKey:%s OwnerID:%q CAPEM:%d bytes ResyncPeriod:%s DriftPeriod:%s MaxConcurrentReads:%d}",
		o.URL, o.Org, key, o.OwnerID, len(o.CAPEM), o.ResyncPeriod, o.DriftPeriod, o.MaxConcurrentReads)
}

// Format makes every fmt verb, %+v and %#v included, print String.
func (o Options) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, o.String()) }

// ownerIDPattern keeps an owner id valid inside a niceId (letters, digits and dashes)
// and case-stable: Pangolin's search, which the resync uses, ignores case.
var ownerIDPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// optionsFrom are the sink's options in PIC's configuration.
func optionsFrom(cfg *config.Config) (Options, error) {
	o := Options{URL: cfg.Pangolin.URL, Org: cfg.Pangolin.Org, APIKey: cfg.Pangolin.APIKey.Reveal(),
		OwnerID: cfg.Pangolin.OwnerID, ResyncPeriod: cfg.ResyncPeriod,
		DriftPeriod: cfg.Pangolin.DriftPeriod, MaxConcurrentReads: cfg.Pangolin.MaxConcurrentReads}
	if !ownerIDPattern.MatchString(o.OwnerID) {
		return Options{}, fmt.Errorf("configure the pangolin sink: owner id %q: want lower-case letters, digits and '-', starting and ending with a letter or digit", o.OwnerID)
	}
	if cfg.Pangolin.CAFile != "" {
		ca, err := os.ReadFile(cfg.Pangolin.CAFile)
		if err != nil {
			return Options{}, fmt.Errorf("configure the pangolin sink: read the CA bundle %s: %w", cfg.Pangolin.CAFile, err)
		}
		o.CAPEM = ca
	}
	return o, nil
}
