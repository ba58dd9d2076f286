package pangolin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
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
	// ResyncPeriod is how often the sink reads again everything it owns in Pangolin.
	ResyncPeriod time.Duration
}

// DefaultOwnerID is the owner id of a PIC that was given none.
const DefaultOwnerID = "default"

// DefaultResyncPeriod applies when Options.ResyncPeriod is zero.
const DefaultResyncPeriod = 5 * time.Minute

// String describes the options without the API key.
func (o Options) String() string {
	key := ""
	if o.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("pangolin.Options{URL:%q Org:%q APIKey:%s OwnerID:%q CAPEM:%d bytes ResyncPeriod:%s}",
		o.URL, o.Org, key, o.OwnerID, len(o.CAPEM), o.ResyncPeriod)
}

// Format makes every fmt verb, %+v and %#v included, print String.
func (o Options) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, o.String()) }

// ownerIDPattern keeps an owner id valid inside a niceId (letters, digits and dashes)
// and case-stable: Pangolin's search, which the resync uses, ignores case.
var ownerIDPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Environment variables the factory reads.
//
// TODO(config): these move to internal/config (cfg.Pangolin and cfg.Sink) when the
// configuration branch lands; the factory then reads cfg instead of the environment.
const (
	EnvURL        = "PIC_PANGOLIN_URL"
	EnvOrg        = "PIC_PANGOLIN_ORG"
	EnvAPIKey     = "PIC_PANGOLIN_API_KEY"
	EnvAPIKeyFile = "PIC_PANGOLIN_API_KEY_FILE"
	EnvOwnerID    = "PIC_PANGOLIN_OWNER_ID"
	EnvCAFile     = "PIC_PANGOLIN_CA_FILE"
)

// OptionsFromEnv reads the options from the environment through lookup (os.LookupEnv),
// files through readFile (os.ReadFile). A missing URL, org or key stops start-up with a
// message that names the variable; no message ever holds the key.
//
// TODO(config): replaced by cfg.Pangolin when the configuration branch lands.
func OptionsFromEnv(lookup func(string) (string, bool), readFile func(string) ([]byte, error)) (Options, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	o := Options{URL: get(EnvURL), Org: get(EnvOrg), APIKey: get(EnvAPIKey), OwnerID: get(EnvOwnerID)}
	var errs []error
	if o.URL == "" {
		errs = append(errs, fmt.Errorf("%s is not set: the base URL of Pangolin's Integration API, such as https://pangolin.example.com/v1", EnvURL))
	}
	if o.Org == "" {
		errs = append(errs, fmt.Errorf("%s is not set: the id of the Pangolin organization to publish into", EnvOrg))
	}
	if file := get(EnvAPIKeyFile); file != "" {
		if o.APIKey != "" {
			errs = append(errs, fmt.Errorf("set %s or %s, not both", EnvAPIKey, EnvAPIKeyFile))
		}
		b, err := readFile(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("read the API key file %s (%s): %w", file, EnvAPIKeyFile, err))
		}
		o.APIKey = strings.TrimSpace(string(b))
	}
	if o.APIKey == "" {
		errs = append(errs, fmt.Errorf("%s (or %s) is not set: a Pangolin API key of the organization, \"<apiKeyId>.<secret>\"", EnvAPIKey, EnvAPIKeyFile))
	}
	if o.OwnerID == "" {
		o.OwnerID = DefaultOwnerID
	}
	if !ownerIDPattern.MatchString(o.OwnerID) {
		errs = append(errs, fmt.Errorf("%s=%q: want lower-case letters, digits and '-', at most 63, starting and ending with a letter or digit", EnvOwnerID, o.OwnerID))
	}
	if file := get(EnvCAFile); file != "" {
		b, err := readFile(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("read the CA bundle %s (%s): %w", file, EnvCAFile, err))
		}
		o.CAPEM = b
	}
	if err := errors.Join(errs...); err != nil {
		return Options{}, fmt.Errorf("configure the pangolin sink: %w", err)
	}
	return o, nil
}

// osEnv is the process's environment, for the factory.
var osEnv = struct {
	lookup   func(string) (string, bool)
	readFile func(string) ([]byte, error)
}{os.LookupEnv, os.ReadFile}
