package config

import (
	"bytes"
	"cmp"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stefb69/pangolin-ingress-controller/internal/hostpolicy"
	"github.com/stefb69/pangolin-ingress-controller/internal/tunnel"
)

// file is the schema viper decodes: the Config's keys and the tunnel keys, which
// together become Config.Tunnels.
type file struct {
	Config             `mapstructure:",squash"`
	DefaultTunnel      tunnelSpec            `mapstructure:"defaultTunnel"`
	TunnelNamespace    string                `mapstructure:"tunnelNamespace"`
	OnlyListedTunnels  bool                  `mapstructure:"onlyListedTunnels"`
	TunnelClassMapping []string              `mapstructure:"tunnelClassMapping"`
	TunnelSection      map[string]tunnelSpec `mapstructure:"tunnels"`
}

// Load reads the configuration from args (the command line without the program name),
// the environment and the YAML file named by --config or PIC_CONFIG, in this order of
// precedence: flags, environment, file, defaults. A blank variable counts as unset.
// Sources and the sink must be among plugins. It returns pflag.ErrHelp, after printing
// usage to stderr, for --help, and an *Error listing every problem.
func Load(args []string, plugins Plugins) (*Config, Origins, error) {
	return load(args, plugins, os.Stderr, false)
}

// LoadOffline reads the configuration as Load does, for a run that reaches no Pangolin
// (`manager render`): the API key, its file and the CA bundle are neither read nor
// required, and neither are pangolin.url and pangolin.org. A configuration that mounts
// its key from a Secret can then be rendered where the Secret is not.
func LoadOffline(args []string, plugins Plugins) (*Config, Origins, error) {
	return load(args, plugins, os.Stderr, true)
}

// loader reads one configuration: viper holds the sources and their precedence, the
// loader knows where each value came from and says what is wrong with it.
type loader struct {
	viper    *viper.Viper
	flags    *pflag.FlagSet
	file     string         // the configuration file's path, "" for none
	written  map[string]any // the file as YAML decodes it, keys spelt as the file spells them
	plugins  Plugins
	origins  Origins
	problems problems
}

// newLoader returns a loader that knows every key's default and nothing else.
func newLoader(plugins Plugins) *loader {
	l := &loader{viper: viper.New(), plugins: plugins, origins: Origins{}}
	for _, k := range keys {
		l.viper.SetDefault(k.name, k.def)
	}
	return l
}

// load reads the configuration; offline leaves out what only a run that talks to
// Pangolin needs (see LoadOffline). Usage goes to out.
func load(args []string, plugins Plugins, out io.Writer, offline bool) (*Config, Origins, error) {
	l := newLoader(plugins)
	l.flags = newFlagSet(out, plugins)
	if err := l.parseCommandLine(args); err != nil {
		return nil, nil, err
	}
	l.checkEnvNames()
	l.readFile()
	l.bindSources()

	c := l.decode()
	c.PrintConfig, _ = l.flags.GetBool(FlagPrint) // a bool flag always reads as a bool
	if !offline {
		l.readPangolinAccess(c)
	}
	l.checkValues(c)
	l.checkSecretNamespaces(c)
	l.checkTunnels(c.Tunnels)
	l.checkHostPolicy(c.HostPolicy)
	l.checkManagedSites(c)

	if err := l.problems.err(); err != nil {
		return nil, nil, err
	}
	return c, l.origins, nil
}

// newFlagSet declares a flag for every key that has one, typed as its default, plus
// --config and --print-config.
func newFlagSet(out io.Writer, plugins Plugins) *pflag.FlagSet {
	flags := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	flags.SetOutput(out)
	flags.SortFlags = false // the order of the key table, which groups related flags
	for _, k := range keys {
		usage := flagUsage(k, plugins)
		switch def := k.def.(type) {
		case string:
			flags.String(k.flag, def, usage)
		case bool:
			flags.Bool(k.flag, def, usage)
		case int:
			flags.Int(k.flag, def, usage)
		case float32:
			flags.Float32(k.flag, def, usage)
		case time.Duration:
			flags.Duration(k.flag, def, usage)
		case []string:
			flags.StringSlice(k.flag, def, usage)
		}
	}
	flags.String(FlagConfigFile, "", "YAML configuration file [env "+EnvConfigFile+"]")
	flags.Bool(FlagPrint, false, "print the effective configuration, with where each value came from, and exit")
	flags.Usage = func() {
		fmt.Fprintf(out, "Usage: manager [flags]\n\n"+
			"A flag wins over an environment variable, which wins over the file given by --config.\n"+
			"The Pangolin API key comes from %s or the file pangolin.apiKeyFile names.\n\n"+
			"Flags:\n%s", EnvAPIKey, flags.FlagUsages())
	}
	return flags
}

// flagUsage is a flag's help: what it sets, the names the caller accepts for it, and
// the other ways to set the same key.
func flagUsage(k *key, plugins Plugins) string {
	usage := strings.TrimSpace(k.usage + " " + strings.Join(k.pluginNames(plugins), ", "))
	return usage + " [env " + strings.Join(k.env, " or ") + ", file key " + k.name + "]"
}

// parseCommandLine reads the flags. The command line holds flags only: a stray word is
// more likely a mistake, such as a flag missing its dashes, than something to ignore.
func (l *loader) parseCommandLine(args []string) error {
	if err := l.flags.Parse(args); err != nil {
		return commandLineError(l.flags, err)
	}
	if l.flags.NArg() > 0 {
		return fmt.Errorf("invalid command line: unexpected argument %q: only flags are accepted (see --help)", l.flags.Arg(0))
	}
	return nil
}

// commandLineError says what is wrong with the command line. A bad value reads like
// any other bad value, naming its key; an unknown flag gets the nearest flag, if any.
func commandLineError(flags *pflag.FlagSet, err error) error {
	var badValue *pflag.InvalidValueError
	var unknownFlag *pflag.NotExistError
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return err
	case errors.As(err, &badValue):
		return &Error{Problems: []string{badFlagValue(badValue)}}
	case errors.As(err, &unknownFlag):
		// A shorthand such as -x is one letter, too little to guess from.
		if typed := unknownFlag.GetSpecifiedName(); len(typed) > 1 {
			if best := closest(typed, flagNames(flags)); best != "" {
				err = fmt.Errorf("%w; did you mean --%s?", err, best)
			}
		}
	}
	return fmt.Errorf("invalid command line: %w (see --help)", err)
}

// badFlagValue describes a flag value pflag could not parse as a bad value of its key:
// `key (--flag) = "value": what is wanted`.
func badFlagValue(err *pflag.InvalidValueError) string {
	flag := "--" + err.GetFlag().Name
	name, want := flag, wantBool // --print-config, the only flag of no key, is a bool
	if i := slices.IndexFunc(keys, func(k *key) bool { return "--"+k.flag == flag }); i >= 0 {
		name, want = keys[i].name+" ("+flag+")", keys[i].want
	}
	return fmt.Sprintf("%s = %q: %s", name, err.GetValue(), want)
}

func flagNames(flags *pflag.FlagSet) []string {
	var names []string
	flags.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// serviceLinkRE matches the variables Kubernetes injects for Services (a Service named
// pic-metrics gives PIC_METRICS_SERVICE_HOST), which are not typos.
var serviceLinkRE = regexp.MustCompile(`_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)?)$`)

// checkEnvNames reports PIC_ variables that look like a misspelt setting, which would
// otherwise be ignored without a word. Other unknown PIC_ variables are left alone.
func (l *loader) checkEnvNames() {
	known := []string{EnvConfigFile, EnvAPIKey}
	for _, k := range keys {
		known = append(known, k.env...)
	}
	for _, entry := range slices.Sorted(slices.Values(os.Environ())) {
		name, _, _ := strings.Cut(entry, "=")
		// Only unknown PIC_ names are compared with the known ones: a Pod's environment
		// holds service links for every Service of its namespace, possibly thousands.
		if !strings.HasPrefix(name, "PIC_") || slices.Contains(known, name) || serviceLinkRE.MatchString(name) {
			continue
		}
		if best := closest(name, known); best != "" {
			l.problems.add("", "environment variable %s is not a setting (did you mean %s?)", name, best)
		}
	}
}

// readFile reads the configuration file named by --config, or else by PIC_CONFIG.
func (l *loader) readFile() {
	path, namedBy := l.configFilePath()
	if path == "" {
		return
	}
	l.file = path
	data, err := os.ReadFile(path)
	if err != nil {
		l.problems.add("", "configuration file (%s): %v", namedBy, err)
		return
	}
	l.viper.SetConfigType("yaml") // whatever the file's extension, such as a ConfigMap key's
	err = l.viper.ReadConfig(bytes.NewReader(data))
	var notYAML viper.ConfigParseError
	switch {
	case errors.As(err, &notYAML):
		l.problems.add("", "configuration file %s is not valid YAML: %v", path, notYAML.Unwrap())
	case err != nil:
		l.problems.add("", "configuration file (%s): %v", namedBy, err)
	default:
		// Viper keeps keys in lower case, and messages name a key as the file writes it.
		// This cannot fail: viper has just decoded the same bytes with the same library.
		_ = yaml.Unmarshal(data, &l.written)
	}
}

// configFilePath returns the configuration file's path, "" for none, and what named
// it. --config wins even when empty: --config= reads no file whatever PIC_CONFIG says.
func (l *loader) configFilePath() (path, namedBy string) {
	if l.flags.Changed(FlagConfigFile) {
		path, _ = l.flags.GetString(FlagConfigFile) // a string flag always reads as a string
		return path, "--" + FlagConfigFile
	}
	return strings.TrimSpace(os.Getenv(EnvConfigFile)), EnvConfigFile
}

// bindSources tells viper which variable and which flag set each key, and records
// where each key's value comes from. A flag wins over a variable, which wins over the
// file, which wins over the default.
func (l *loader) bindSources() {
	for _, k := range keys {
		l.origins[k.name] = Origin{Kind: FromDefault}
		if l.viper.InConfig(k.name) {
			l.origins[k.name] = Origin{Kind: FromFile, Name: l.file}
		}
		// Variable names such as PIC_LEADER_ELECT do not derive from their keys, so
		// each key binds its own variable: the first that is set, since viper would
		// take a blank one as set.
		if variable, ok := firstSetVariable(k.env); ok {
			_ = l.viper.BindEnv(k.name, variable) // fails only without a variable name
			l.origins[k.name] = Origin{Kind: FromEnv, Name: variable}
		}
		if flag := l.flags.Lookup(k.flag); flag != nil {
			_ = l.viper.BindPFlag(k.name, flag) // fails only without a flag
			if flag.Changed {
				l.origins[k.name] = Origin{Kind: FromFlag, Name: "--" + k.flag}
			}
		}
	}
}

// firstSetVariable returns the first of the variables that holds more than blanks.
func firstSetVariable(names []string) (string, bool) {
	for _, name := range names {
		if strings.TrimSpace(os.Getenv(name)) != "" {
			return name, true
		}
	}
	return "", false
}

// decode unmarshals every source into a Config, strictly: an unknown key or a value of
// the wrong type is a problem.
func (l *loader) decode() *Config {
	l.checkGroupsAreMappings()
	var f file
	hooks := mapstructure.ComposeDecodeHookFunc(clean, mapstructure.StringToTimeDurationHookFunc(), tunnelRef)
	if err := l.viper.UnmarshalExact(&f, viper.DecodeHook(hooks)); err != nil {
		l.reportDecodeErrors(err)
	}
	f.Config.Tunnels = l.tunnels(&f)
	return &f.Config
}

// checkGroupsAreMappings reports a group such as leaderElection that the file gives a
// plain value ("leaderElection: true"). mapstructure does not always see it: viper may
// let the defaults of the group's keys replace that value.
func (l *loader) checkGroupsAreMappings() {
	for _, name := range children("") {
		if !isGroup(name) || !l.viper.InConfig(name) {
			continue
		}
		value := l.viper.Get(name)
		if _, isMapping := value.(map[string]any); !isMapping {
			l.bad(name, value, l.wantOf(name))
		}
	}
}

// children lists the names directly under parent, "" for the top level: the keys of a
// group, or the top-level keys and groups.
func children(parent string) []string {
	var names []string
	for _, k := range keys {
		rest := k.name
		if parent != "" {
			var under bool
			if rest, under = strings.CutPrefix(k.name, parent+"."); !under {
				continue
			}
		}
		child, _, _ := strings.Cut(rest, ".")
		names = append(names, child)
	}
	return slices.Compact(names) // the keys of a group follow each other in the table
}

// isGroup reports whether name holds keys of its own, as leaderElection does.
func isGroup(name string) bool { return name != "" && len(children(name)) > 0 }

// reportDecodeErrors reports every error of the tree mapstructure returns, in the order
// of the fields they concern: mapstructure decodes a mapping such as tunnels in Go's
// map order, which changes from run to run, and the problems of two tunnel entries
// would change places with it.
func (l *loader) reportDecodeErrors(err error) {
	decodeErrors, others := splitDecodeErrors(err)
	for _, other := range others {
		l.problems.add("", "decode the configuration: %v", other)
	}
	slices.SortStableFunc(decodeErrors, func(a, b *mapstructure.DecodeError) int {
		return strings.Compare(a.Name(), b.Name())
	})
	for _, decodeErr := range decodeErrors {
		l.reportDecodeError(decodeErr)
	}
}

// splitDecodeErrors walks the tree of errors mapstructure returns, joined and wrapped,
// down to the errors of single fields, and to any other error that wraps none.
func splitDecodeErrors(err error) (decodeErrors []*mapstructure.DecodeError, others []error) {
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			innerDecodeErrors, innerOthers := splitDecodeErrors(inner)
			decodeErrors = append(decodeErrors, innerDecodeErrors...)
			others = append(others, innerOthers...)
		}
	case *mapstructure.DecodeError:
		decodeErrors = append(decodeErrors, e)
	default:
		if inner := errors.Unwrap(err); inner != nil {
			return splitDecodeErrors(inner)
		}
		others = append(others, err)
	}
	return decodeErrors, others
}

// invalidKeysPrefix starts mapstructure's message for the keys of a mapping that match
// no field; the keys follow, separated by ", ".
const invalidKeysPrefix = "has invalid keys: "

// reportDecodeError reports one field mapstructure could not decode: a value of the
// wrong type, or a mapping holding unknown keys.
func (l *loader) reportDecodeError(err *mapstructure.DecodeError) {
	name := keyOfField(err.Name())
	unknownKeys, hasUnknownKeys := strings.CutPrefix(err.Unwrap().Error(), invalidKeysPrefix)
	if !hasUnknownKeys {
		l.bad(name, l.viper.Get(name), l.wantOf(name))
		return
	}
	for unknown := range strings.SplitSeq(unknownKeys, ", ") {
		l.reportUnknownKey(name, unknown)
	}
}

// reportUnknownKey reports a key of the file that the mapping parent ("" for the top
// level) does not have, named as the file writes it, with the key meant if one is near.
func (l *loader) reportUnknownKey(parent, unknown string) {
	known := children(parent)
	if parent == "defaultTunnel" || strings.HasPrefix(parent, "tunnels.") {
		known = tunnelFields
	}
	name := unknown
	if parent != "" {
		name = parent + "." + unknown
	}
	for _, written := range l.spellingsOf(name) {
		leaf := written[strings.LastIndex(written, ".")+1:]
		l.problems.add("", "file %s: unknown key %q%s", l.file, written, suggest(leaf, known))
	}
}

// spellingsOf returns how the file writes a key that viper and mapstructure name in
// their own case (tunnels.edge.sitenmae for the file's tunnels.Edge.siteNmae): every
// spelling, since a file may write one key in several cases, or the name itself if
// the file holds no such key.
func (l *loader) spellingsOf(name string) []string {
	spellings := writtenKeys(l.written, strings.Split(name, "."))
	if len(spellings) == 0 {
		return []string{name}
	}
	return spellings
}

// writtenKeys returns the keys of node that read as path when case is ignored, each
// as node writes it, its parts joined by dots. A key may hold a dot itself: viper
// reads "leaderElection.id: x" as leaderElection: {id: x}.
func writtenKeys(node any, path []string) []string {
	if len(path) == 0 {
		return []string{""}
	}
	mapping := asMapping(node)
	var found []string
	for _, key := range slices.Sorted(maps.Keys(mapping)) {
		parts := strings.Split(key, ".")
		if len(parts) > len(path) || !equalFold(parts, path[:len(parts)]) {
			continue
		}
		for _, rest := range writtenKeys(mapping[key], path[len(parts):]) {
			found = append(found, strings.TrimSuffix(key+"."+rest, "."))
		}
	}
	return found
}

// asMapping returns node as a mapping with text keys, nil if it is not a mapping. YAML
// decodes a mapping whose keys are not all text as map[any]any; viper reads those keys
// as %v writes them, and so does this.
func asMapping(node any) map[string]any {
	switch mapping := node.(type) {
	case map[string]any:
		return mapping
	case map[any]any:
		converted := make(map[string]any, len(mapping))
		for key, value := range mapping {
			converted[fmt.Sprint(key)] = value
		}
		return converted
	}
	return nil
}

// equalFold reports whether two paths name the same key when case is ignored, as viper
// ignores it.
func equalFold(a, b []string) bool {
	return slices.EqualFunc(a, b, strings.EqualFold)
}

var (
	listIndexRE    = regexp.MustCompile(`\[[0-9]+\]`)
	mapKeyBrackets = strings.NewReplacer("[", ".", "]", "")
)

// keyOfField turns the name of a field as mapstructure writes it into the key that
// holds the field's value: tunnels[edge].allowedNamespaces[0] is in
// tunnels.edge.allowedNamespaces, since a problem names the list rather than an item.
func keyOfField(field string) string {
	withoutListIndexes := listIndexRE.ReplaceAllString(field, "")
	return mapKeyBrackets.Replace(withoutListIndexes)
}

// wantOf says what a key accepts, for a key of the table and for the other names a
// problem can name: a group, and the keys inside a tunnel.
func (l *loader) wantOf(name string) string {
	switch {
	case isGroup(name):
		return "want a mapping with keys " + strings.Join(children(name), ", ")
	case strings.HasSuffix(name, ".allowedNamespaces"):
		return wantAllowed
	case strings.HasSuffix(name, ".name"):
		return "want a PangolinTunnel name"
	case order(name) < 0:
		return "want a value of the schema"
	}
	return keyByName(name).wantText(l.plugins)
}

// bad reports a bad value: `key (source) = value: what is wanted`.
func (l *loader) bad(name string, value any, want string) {
	l.problems.add(name, "%s (%s) = %s: %s", name, l.where(name), formatValue(value), want)
}

// where names the source of a key's value, or of the nearest key holding it: the
// variable or flag alone, or "file <path>". A name without an origin of its own, such
// as tunnels.edge.name, can only come from the file.
func (l *loader) where(name string) string {
	for ; name != ""; name = parentKey(name) {
		origin, known := l.origins[name]
		if !known {
			continue
		}
		if origin.Kind == FromEnv || origin.Kind == FromFlag {
			return origin.Name
		}
		return origin.String()
	}
	return "file " + l.file
}

// parentKey is the key that holds name: leaderElection for leaderElection.id, "" for a
// top-level key.
func parentKey(name string) string {
	lastDot := strings.LastIndex(name, ".")
	return name[:max(lastDot, 0)]
}

// pangolinSink is the sink that talks to Pangolin's Integration API itself, and so needs
// its address, the organization and the API key.
const pangolinSink = "pangolin"

// readPangolinAccess reads the API key, checks the CA bundle, and requires what the
// pangolin sink needs. No message quotes what a file holds.
func (l *loader) readPangolinAccess(c *Config) {
	l.readAPIKey(&c.Pangolin)
	l.checkCABundle(c.Pangolin.CAFile)
	if c.Sink == pangolinSink {
		l.requirePangolinAccess(c.Pangolin)
	}
}

// readAPIKey takes the API key from PIC_PANGOLIN_API_KEY or from the file
// pangolin.apiKeyFile names, which must not both be given.
func (l *loader) readAPIKey(p *Pangolin) {
	const keyFile = "pangolin.apiKeyFile"
	fromEnv := strings.TrimSpace(os.Getenv(EnvAPIKey))
	p.APIKey = Secret(fromEnv)
	if p.APIKeyFile == "" {
		return
	}
	if fromEnv != "" {
		l.problems.add(keyFile, "%s (%s) and %s both give the Pangolin API key: choose one", keyFile, l.where(keyFile), EnvAPIKey)
		return
	}
	data, err := os.ReadFile(p.APIKeyFile)
	if err != nil {
		l.bad(keyFile, p.APIKeyFile, "cannot read the API key: "+err.Error())
		return
	}
	// A Secret mounted from a file often ends with a newline.
	p.APIKey = Secret(strings.TrimSpace(string(data)))
	if p.APIKey == "" {
		l.bad(keyFile, p.APIKeyFile, "the file is empty; want the API key in it")
	}
}

// checkCABundle checks that pangolin.caFile, when given, holds a certificate: a wrong
// file would otherwise surface as a TLS error at the first call to Pangolin.
func (l *loader) checkCABundle(path string) {
	const caFile = "pangolin.caFile"
	if path == "" {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		l.bad(caFile, path, "cannot read the CA bundle: "+err.Error())
		return
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		l.bad(caFile, path, "the file holds no PEM certificate; want a CA bundle such as ca.crt")
	}
}

// requirePangolinAccess reports each of pangolin.url, pangolin.org and the API key that
// is missing, with every way to give it; a key already reported is not reported again.
func (l *loader) requirePangolinAccess(p Pangolin) {
	required := []struct {
		key   string // the key that gives the value
		value string
		what  string // what is missing, in the message
		fix   string // what to set the key to
	}{
		{key: "pangolin.url", value: p.URL, what: "pangolin.url",
			fix: "the Integration API base URL, e.g. https://pangolin.example.com/v1"},
		{key: "pangolin.org", value: p.Org, what: "pangolin.org",
			fix: "the organization id"},
		{key: "pangolin.apiKeyFile", value: string(p.APIKey), what: "the Pangolin API key",
			fix: "a file holding it, or set " + EnvAPIKey},
	}
	for _, r := range required {
		if r.value != "" || l.problems.has(r.key) {
			continue
		}
		k := keyByName(r.key)
		l.problems.add(k.name, "%s is required when sink is %s: set %s, %s or --%s to %s",
			r.what, pangolinSink, k.name, k.env[0], k.flag, r.fix)
	}
}

// checkValues checks every key's decoded value against its rule.
func (l *loader) checkValues(c *Config) {
	byKey := values(c)
	for _, k := range keys {
		// A key that did not decode has its problem already; its zero value says nothing.
		if l.problems.has(k.name) {
			continue
		}
		if msg := k.checkValue(byKey[k.name], l.plugins); msg != "" {
			l.bad(k.name, byKey[k.name], msg)
		}
	}
}

// checkSecretNamespaces refuses a namespace of secretNamespaces that watchNamespaces
// leaves out: PIC reads no policy there, so a grant on its Secrets would be unused, and
// the list most likely misspells a watched one.
func (l *loader) checkSecretNamespaces(c *Config) {
	if len(c.WatchNamespaces) == 0 || l.problems.has("secretNamespaces") || l.problems.has("watchNamespaces") {
		return
	}
	for _, ns := range c.SecretNamespaces {
		if !slices.Contains(c.WatchNamespaces, ns) {
			l.problems.add("secretNamespaces", "secretNamespaces (%s) names %s, which watchNamespaces (%s) leaves out: PIC reads no AccessPolicy there; list only watched namespaces",
				l.where("secretNamespaces"), ns, l.where("watchNamespaces"))
		}
	}
}

// values maps every key to its value in c, by the names viper decodes.
func values(c *Config) map[string]any {
	byKey := map[string]any{}
	asFile := file{Config: *c, TunnelNamespace: c.Tunnels.Namespace, OnlyListedTunnels: c.Tunnels.OnlyListed}
	_ = mapstructure.Decode(&asFile, &byKey) // a struct always decodes into a map
	for _, k := range keys {
		// mapstructure nests a group's keys ("leaderElection": {"id": ...}); a key of the
		// table names them with a dot.
		if group, child, nested := strings.Cut(k.name, "."); nested {
			byKey[k.name] = byKey[group].(map[string]any)[child]
		}
	}
	return byKey
}

// tunnels assembles Config.Tunnels from defaultTunnel, tunnelNamespace, the tunnels
// section and the alias=tunnel entries of tunnelClassMapping; checkTunnels judges the
// names.
func (l *loader) tunnels(f *file) tunnel.Resolver {
	resolver := tunnel.Resolver{
		Default:    tunnel.Tunnel(f.DefaultTunnel),
		Namespace:  f.TunnelNamespace,
		Aliases:    map[string]tunnel.Tunnel{},
		OnlyListed: f.OnlyListedTunnels,
	}
	// The section is read from viper rather than from f: viper leaves out of what it
	// decodes an entry with nothing under it ("edge:" or "edge: {}").
	section, _ := l.viper.Get("tunnels").(map[string]any)
	for alias := range section {
		t := tunnel.Tunnel(f.TunnelSection[alias])
		t.Name = cmp.Or(t.Name, alias) // an entry without a name names its tunnel after its alias
		resolver.Aliases[alias] = t
		l.origins["tunnels."+alias] = l.origins["tunnels"]
	}
	for _, entry := range f.TunnelClassMapping {
		l.addMappingEntry(resolver.Aliases, section, entry)
	}
	return resolver
}

// addMappingEntry adds the alias of one alias=tunnel entry of tunnelClassMapping, unless
// the entry is malformed or its alias is defined already.
func (l *loader) addMappingEntry(aliases map[string]tunnel.Tunnel, section map[string]any, entry string) {
	const mapping = "tunnelClassMapping"
	alias, target, _ := strings.Cut(entry, "=")
	alias = strings.TrimSpace(alias)
	target = strings.TrimSpace(target)
	if alias == "" || target == "" {
		l.bad(mapping, entry, "want alias=tunnel, such as edge-eu=edge-eu-tunnel or edge-eu=pangolin-system/edge-eu-tunnel")
		return
	}
	t, ok := parseRef(target)
	if !ok {
		l.bad(mapping, entry, wantTunnelRef)
		return
	}
	if _, inSection := section[alias]; inSection {
		l.problems.add(mapping, "tunnels.%s (%s) and %s (%s) both define alias %q: keep one of them",
			alias, l.where("tunnels"), mapping, l.where(mapping), alias)
		return
	}
	if _, definedAlready := aliases[alias]; definedAlready {
		l.problems.add(mapping, "%s (%s) defines alias %q twice: keep one", mapping, l.where(mapping), alias)
		return
	}
	aliases[alias] = t
	l.origins["tunnels."+alias] = l.origins[mapping]
}

// checkHostPolicy reports each problem of the hostPolicy section under the key of the
// rule, or of the value, it concerns: hostPolicy[0].hosts[1].
func (l *loader) checkHostPolicy(p hostpolicy.Policy) {
	for _, problem := range p.Check() {
		name := "hostPolicy" + problem.Key
		l.problems.add(name, "%s (%s): %s", name, l.where("hostPolicy"), problem.Message)
	}
}

// checkTunnels checks the default tunnel, when there is one, and every alias with its
// tunnel.
func (l *loader) checkTunnels(r tunnel.Resolver) {
	noDefaultTunnel := reflect.ValueOf(r.Default).IsZero() // defaultTunnel: ""
	if msg := checkTunnel(r.Default); msg != "" && !noDefaultTunnel {
		l.bad("defaultTunnel", refString(r.Default), msg)
	}
	for _, alias := range slices.Sorted(maps.Keys(r.Aliases)) {
		name := "tunnels." + alias
		if !isNamespace(alias) {
			l.bad(name, alias, "invalid alias; want an alias of lowercase letters, digits and '-' (at most 63 characters), since it names the IngressClass pangolin-<alias>")
			continue
		}
		if msg := checkTunnel(r.Aliases[alias]); msg != "" {
			l.bad(name, refString(r.Aliases[alias]), msg)
		}
	}
}

// checkTunnel says what is wrong with a tunnel, "" if nothing.
func checkTunnel(t tunnel.Tunnel) string {
	switch {
	case t.Name == "":
		return "the tunnel name is missing; " + wantTunnelRef
	case strings.Contains(t.Name, "/"):
		return "the tunnel name contains '/'; give the namespace as namespace"
	case !isSubdomain(t.Name):
		return fmt.Sprintf("%q is not a PangolinTunnel name: want lowercase letters, digits, '-' and '.', at most 253 characters", t.Name)
	case t.Namespace != "" && !isNamespace(t.Namespace):
		return fmt.Sprintf("%q is not a namespace name (%s)", t.Namespace, wantNamespace)
	case t.AllowedNamespaces != nil && len(t.AllowedNamespaces) == 0:
		// The Resolver reads an empty list as "everyone": spell that out instead.
		return `allowedNamespaces is empty, which would allow every namespace; list the namespaces, or write ["*"] to allow all`
	}
	for _, namespace := range t.AllowedNamespaces {
		if namespace != "*" && !isNamespace(namespace) {
			return fmt.Sprintf("%q is not a namespace name (%s); %s", namespace, wantNamespace, wantAllowed)
		}
	}
	return ""
}

// refString writes a tunnel as namespace/name, or name alone when it has no namespace.
func refString(t tunnel.Tunnel) string { return strings.TrimPrefix(t.Namespace+"/"+t.Name, "/") }

// keyByName returns the key of the table named name, or holding it; name must be one.
func keyByName(name string) *key { return keys[order(name)] }

// order places a key's problems in table order; problems of no key come first.
func order(name string) int {
	return slices.IndexFunc(keys, func(k *key) bool {
		return k.name == name || strings.HasPrefix(name, k.name+".") || strings.HasPrefix(k.name, name+".")
	})
}

// pluginNames are the names the caller builds that k's value must be among, if any.
func (k *key) pluginNames(p Plugins) []string {
	if k.plugins == nil {
		return nil
	}
	return k.plugins(p)
}

// wantText says what k accepts, with the names the caller builds.
func (k *key) wantText(p Plugins) string {
	return strings.TrimSpace(k.want + " " + strings.Join(k.pluginNames(p), ", "))
}

// checkValue says what is wrong with a decoded value of k, "" if nothing.
func (k *key) checkValue(v any, p Plugins) string {
	if k.plugins != nil {
		if msg := k.checkPluginNames(v, p); msg != "" {
			return msg
		}
	}
	if k.allowed != nil {
		s, _ := v.(string)
		if !slices.Contains(k.allowed, s) {
			return k.want + suggest(s, k.allowed)
		}
	}
	if k.ok != nil && !k.ok(v) {
		return k.want
	}
	return ""
}

// checkPluginNames checks the names a value chooses (a list for sources, one name for
// sink) against those the caller builds: at least one, and none unknown.
func (k *key) checkPluginNames(v any, p Plugins) string {
	chosen, _ := v.([]string)
	if name, isText := v.(string); isText && name != "" {
		chosen = []string{name}
	}
	what := strings.TrimSuffix(k.name, "s") // source, sink
	if len(chosen) == 0 {
		return fmt.Sprintf("no %s is chosen; %s", what, k.wantText(p))
	}
	known := k.pluginNames(p)
	for _, name := range chosen {
		if !slices.Contains(known, name) {
			return fmt.Sprintf("unknown %s %q%s; %s", what, name, suggest(name, known), k.wantText(p))
		}
	}
	return ""
}

// The rules of the key table. A rule gets the decoded value, whose type is the key's.

// is makes a rule of a check of text.
func is(ok func(string) bool) func(any) bool {
	return func(v any) bool { return ok(v.(string)) }
}

// optional makes a rule of a check of text that also accepts "".
func optional(ok func(string) bool) func(any) bool {
	return is(func(s string) bool { return s == "" || ok(s) })
}

func atLeastOne(v any) bool      { return v.(int) >= 1 }
func isNamespace(s string) bool  { return len(validation.IsDNS1123Label(s)) == 0 }
func notNamespace(s string) bool { return !isNamespace(s) }
func isSubdomain(s string) bool  { return len(validation.IsDNS1123Subdomain(s)) == 0 }

func isQualifiedName(s string) bool { return len(validation.IsQualifiedName(s)) == 0 }

// isHostOrIP accepts a DNS name or an IP address (v4 or v6).
func isHostOrIP(s string) bool { return net.ParseIP(s) != nil || isSubdomain(s) }

// isAddr accepts host:port and :port, and "0", which disables an endpoint.
func isAddr(s string) bool {
	if s == "0" {
		return true
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

// isURL accepts an absolute http or https URL.
func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validQPS accepts a positive finite rate, or -1 for no client-side limit (client-go's
// and controller-runtime's spelling). 0 is refused: client-go would read it as its own
// default of 5.
func validQPS(v any) bool {
	q := v.(float32)
	return q == -1 || (q > 0 && !math.IsInf(float64(q), 0))
}

// clean is the first decode hook: it trims text, as a ConfigMap often adds a newline,
// and reads a list from one string (commas and newlines separate items, # starts a
// comment) or from repeated flags, without empty and repeated items. It refuses what
// mapstructure would otherwise convert quietly.
func clean(_, to reflect.Type, data any) (any, error) {
	if err := refuseQuietConversion(to, data); err != nil {
		return nil, err
	}
	switch value := data.(type) {
	case string:
		if to == reflect.TypeFor[[]string]() {
			return cleanList(splitList(value)), nil
		}
		return strings.TrimSpace(value), nil
	case []string:
		return cleanList(value), nil
	}
	return data, nil
}

// refuseQuietConversion refuses what mapstructure would decode into something the user
// did not write: a mapping into a list (of one empty item), a bare number into a
// duration (of nanoseconds), a fraction into an integer (without the fraction).
func refuseQuietConversion(to reflect.Type, data any) error {
	_, isText := data.(string)
	_, isMapping := data.(map[string]any)
	number, isFloat := data.(float64)
	switch {
	case isMapping && to == reflect.TypeFor[[]string]():
		return errors.New("a mapping is not a list")
	case to == reflect.TypeFor[time.Duration]() && !isText && reflect.TypeOf(data) != to:
		return errors.New("a duration needs a unit")
	case to.Kind() == reflect.Int && isFloat && number != math.Trunc(number):
		return errors.New("not a whole number")
	}
	return nil
}

var commentRE = regexp.MustCompile(`#.*`)

// splitList reads the items of a list written as text, such as an environment
// variable: commas and newlines separate them, # starts a comment.
func splitList(text string) []string {
	withoutComments := commentRE.ReplaceAllString(text, "")
	return strings.FieldsFunc(withoutComments, func(r rune) bool { return r == ',' || r == '\n' })
}

// cleanList trims every item and drops empty and repeated ones. It returns an empty
// list, never nil, for no items.
func cleanList(items []string) []string {
	out := []string{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item != "" && !slices.Contains(out, item) {
			out = append(out, item)
		}
	}
	return out
}

// tunnelSpec is a tunnel as the file writes it: "name", "namespace/name" or a mapping.
// It mirrors tunnel.Tunnel, to convert to and from it, with the file's names.
type tunnelSpec struct {
	Name              string   `mapstructure:"name" yaml:"name"` // default: the alias
	Namespace         string   `mapstructure:"namespace" yaml:"namespace,omitempty"`
	AllowedNamespaces []string `mapstructure:"allowedNamespaces" yaml:"allowedNamespaces"`
	ManagedSite       bool     `mapstructure:"managedSite" yaml:"managedSite,omitempty"`
}

// tunnelFields are the keys of a tunnel written as a mapping.
var tunnelFields = []string{"name", "namespace", "allowedNamespaces", "managedSite"}

// tunnelRef is the decode hook that reads a tunnel written as text, "name" or
// "namespace/name"; "" is no tunnel.
func tunnelRef(_, to reflect.Type, data any) (any, error) {
	text, isText := data.(string)
	if !isText || to != reflect.TypeFor[tunnelSpec]() {
		return data, nil
	}
	if text == "" {
		return tunnelSpec{}, nil
	}
	t, ok := parseRef(text)
	if !ok {
		return nil, errors.New(wantTunnelRef)
	}
	return tunnelSpec(t), nil
}

// parseRef reads "name" or "namespace/name", and reports whether it is one of them;
// checkTunnel judges the names.
func parseRef(s string) (tunnel.Tunnel, bool) {
	namespace, name, qualified := strings.Cut(s, "/")
	if !qualified {
		return tunnel.Tunnel{Name: s}, s != ""
	}
	t := tunnel.Tunnel{Name: name, Namespace: namespace}
	return t, namespace != "" && name != "" && !strings.Contains(name, "/")
}

// suggest is the end of a message that names the known word s was likely meant to be,
// or "" if none is near.
func suggest(s string, known []string) string {
	if best := closest(s, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// closest returns the known word nearest to s, if near enough to be a typo and nearer
// than any other: when two words are equally near, a guess would mislead as often as
// it helps, so there is none.
func closest(s string, known []string) string {
	typed := normalizeName(s)
	// About one typo per four letters, at least one and at most three.
	limit := min(max(len(typed)/4, 1), 3)
	var nearest []string
	var nearestScore nearness
	for _, word := range known {
		score := nearnessOf(typed, normalizeName(word))
		switch {
		case score.typos > limit: // too far to be a typo
		case len(nearest) == 0 || score.nearerThan(nearestScore):
			nearest, nearestScore = []string{word}, score
		case score == nearestScore && !slices.Contains(nearest, word):
			nearest = append(nearest, word)
		}
	}
	if len(nearest) != 1 {
		return ""
	}
	return nearest[0]
}

// normalizeName is a name as closest compares it. Case, '-', '_' and a PIC_ prefix do not
// count, so that the spelling of one source finds the name in another:
// backend-scheme and PIC_BACKEND_SCHEME find backendScheme.
func normalizeName(name string) string {
	name = strings.TrimPrefix(strings.ToLower(name), "pic_")
	return strings.NewReplacer("-", "", "_", "").Replace(name)
}

// nearness is how near a typed name is to a known one.
type nearness struct {
	typos int
	// truncated: one name only begins the other, and typos is a guess. At the same
	// count, a misspelling of one name is nearer than the beginning of another:
	// PIC_LEADER_ELECTION_NAMESACE means PIC_LEADER_ELECTION_NAMESPACE, not
	// PIC_LEADER_ELECT.
	truncated bool
}

// nearerThan reports whether n is nearer than other: fewer typos, or as many but
// not truncated.
func (n nearness) nearerThan(other nearness) bool {
	if n.typos != other.typos {
		return n.typos < other.typos
	}
	return !n.truncated && other.truncated
}

// nearnessOf says how near typed is to word, both normalized.
func nearnessOf(typed, word string) nearness {
	score := spellingNearness(typed, word)
	// A key is often written with the "name" its variable ends in: defaultTunnelName
	// for defaultTunnel, whose variable is PIC_DEFAULT_TUNNEL_NAME. The extra "name"
	// counts as one typo, added to those of the rest: defaultTunelName is two typos
	// from defaultTunnel.
	if stem, hasName := strings.CutSuffix(typed, "name"); hasName && stem != "" {
		withoutName := spellingNearness(stem, word)
		withoutName.typos++
		if withoutName.nearerThan(score) {
			score = withoutName
		}
	}
	return score
}

// spellingNearness counts the typos between a and b, the Levenshtein distance, except
// that a name that begins the other counts as one typo however much is missing, if it
// has three letters or more: warn is near warning, httproute near httproutes.
func spellingNearness(a, b string) nearness {
	d := distance(a, b)
	isPrefix := len(a) >= 3 && strings.HasPrefix(b, a) || len(b) >= 3 && strings.HasPrefix(a, b)
	if d > 1 && isPrefix {
		return nearness{typos: 1, truncated: true}
	}
	return nearness{typos: d}
}

// distance is the Levenshtein distance between a and b: the fewest insertions,
// deletions and substitutions of bytes that turn a into b.
func distance(a, b string) int {
	// previous[j] is the distance between a[:i] and b[:j], for the row i before current.
	previous := make([]int, len(b)+1)
	current := make([]int, len(b)+1)
	for j := range previous {
		previous[j] = j
	}
	for i := range len(a) {
		current[0] = i + 1
		for j := range len(b) {
			substitute := previous[j]
			if a[i] != b[j] {
				substitute++
			}
			current[j+1] = min(previous[j+1]+1, current[j]+1, substitute)
		}
		previous, current = current, previous
	}
	return previous[len(b)]
}
