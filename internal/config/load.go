package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// Environment variable and flag that name the configuration file; they are not settings
// themselves.
const (
	EnvConfigFile  = "PIC_CONFIG"
	FlagConfigFile = "config"
	FlagPrint      = "print-config"
)

// OriginKind is where a value came from.
type OriginKind string

const (
	FromDefault OriginKind = "default"
	FromFile    OriginKind = "file"
	FromEnv     OriginKind = "env"
	FromFlag    OriginKind = "flag"
)

// Origin is where one effective value came from.
type Origin struct {
	Kind OriginKind
	// Name is the environment variable (PIC_LOG_LEVEL), the flag (--log-level) or the
	// file path.
	Name string
	// Line is the line in the file, or the line within a multi-line value such as
	// PIC_TUNNEL_CLASS_MAPPING; 0 when not known.
	Line int
}

func (o Origin) String() string {
	switch o.Kind {
	case FromDefault:
		return "default"
	case FromFile:
		if o.Line > 0 {
			return fmt.Sprintf("file %s:%d", o.Name, o.Line)
		}
		return "file " + o.Name
	case FromEnv, FromFlag:
		if o.Line > 0 {
			return fmt.Sprintf("%s %s line %d", o.Kind, o.Name, o.Line)
		}
		return string(o.Kind) + " " + o.Name
	}
	return "unknown"
}

// where names the origin in an error message: the variable or flag alone, or the file and line.
func (o Origin) where() string {
	switch o.Kind {
	case FromEnv, FromFlag:
		if o.Line > 0 {
			return fmt.Sprintf("%s line %d", o.Name, o.Line)
		}
		return o.Name
	}
	return o.String()
}

// Origins says, for every file key ("backendScheme", "leaderElection.enabled") and every
// tunnel alias ("tunnels.edge-eu"), where its effective value came from.
type Origins map[string]Origin

// Load reads the configuration from args (the command line without the program name),
// environ (KEY=VALUE entries, as from os.Environ) and the YAML file named by --config or
// PIC_CONFIG, in this order of precedence: flags, environment, file, defaults. An empty
// environment variable counts as unset. It returns pflag.ErrHelp, after printing usage
// to stderr, for --help; an *Error listing every problem for a bad configuration.
func Load(args, environ []string) (*Config, Origins, error) {
	return load(args, environ, os.Stderr)
}

// loader reads one configuration.
//
// viper holds the layers: defaults (SetDefault), the file (ReadConfig) and, above them,
// environment variables and then changed flags (Set, in that order, so that a flag
// overwrites a variable). Viper's own BindEnv and BindPFlags are not used: BindEnv reads
// the process environment, which would make Load depend on os.Environ, and both hand back
// loosely converted values (cast turns "maybe" into false). Each raw value is converted
// strictly here instead, and the file is also parsed as a yaml.Node to reject unknown
// keys and report line numbers, which viper's case-insensitive maps cannot.
type loader struct {
	fs    *pflag.FlagSet
	env   map[string]string
	v     *viper.Viper
	cfg   *Config
	orig  Origins
	probs problems

	path  string                // configuration file, "" for none
	lines map[string]int        // file key → line
	nodes map[string]*yaml.Node // file key → value node
}

func load(args, environ []string, out io.Writer) (*Config, Origins, error) {
	fs := newFlagSet(out)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("invalid command line: %v%s (see --help)", err, flagSuggestion(fs, err))
	}
	if fs.NArg() > 0 {
		hint := ""
		if _, isBool := coerce(&key{kind: kindBool}, fs.Arg(0)); isBool {
			hint = "; a bool flag takes its value after '=', as in --leader-elect=false"
		}
		return nil, nil, fmt.Errorf("invalid command line: unexpected argument %q: only flags are accepted%s (see --help)", fs.Arg(0), hint)
	}

	l := &loader{
		fs:    fs,
		env:   parseEnviron(environ),
		v:     viper.New(),
		cfg:   Default(),
		orig:  Origins{},
		lines: map[string]int{},
		nodes: map[string]*yaml.Node{},
	}
	l.printFlag()
	l.checkEnvNames()
	l.readFile()
	for _, k := range keys {
		if k.kind != kindTunnels {
			l.v.SetDefault(k.name, k.def)
		}
	}
	for _, k := range keys {
		for _, name := range slices.Backward(k.env) { // the first variable wins
			if val, ok := l.lookupEnv(name); ok {
				l.v.Set(k.name, val)
			}
		}
	}
	for _, k := range keys {
		if k.flag != "" && fs.Changed(k.flag) {
			l.v.Set(k.name, fs.Lookup(k.flag).Value.String())
		}
	}

	for _, k := range keys {
		l.orig[k.name] = l.originOf(k)
		if k.get != nil {
			l.scalar(k)
		}
	}
	l.tunnels()

	if err := l.probs.err(); err != nil {
		return nil, nil, err
	}
	// Load has checked everything already, naming sources; this is a safety net that
	// keeps Load and Validate from drifting apart.
	if err := l.cfg.Validate(); err != nil {
		return nil, nil, err
	}
	return l.cfg, l.orig, nil
}

// flagValue holds a flag's text; it is converted strictly, like an environment
// variable's, once every source is known.
type flagValue struct {
	typ  string // the type pflag shows in usage; "bool" makes --flag mean --flag=true
	list bool   // repeated flags add to the list
	text string
	set  bool
}

func (f *flagValue) String() string { return f.text }
func (f *flagValue) Type() string   { return f.typ }
func (f *flagValue) Set(s string) error {
	if f.list && f.set {
		s = f.text + "," + s
	}
	f.text, f.set = s, true
	return nil
}

func newFlagSet(out io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	fs.SetOutput(out)
	fs.SortFlags = false
	for _, k := range keys {
		if k.flag == "" {
			continue
		}
		v := &flagValue{typ: flagType(k.kind), list: k.kind == kindList, text: defaultText(k)}
		where := []string{}
		if len(k.env) > 0 {
			where = append(where, "env "+strings.Join(k.env, " or "))
		}
		where = append(where, "file key "+k.name)
		f := fs.VarPF(v, k.flag, "", k.usage+" ["+strings.Join(where, ", ")+"]")
		if k.kind == kindBool {
			f.NoOptDefVal = "true"
		}
	}
	fs.String(FlagConfigFile, "", "YAML configuration file [env "+EnvConfigFile+"]")
	pf := fs.VarPF(&flagValue{typ: "bool", text: "false"}, FlagPrint, "", "print the effective configuration, with where each value came from, and exit")
	pf.NoOptDefVal = "true"
	fs.Usage = func() {
		fmt.Fprintf(out, `Usage: manager [flags]

pangolin-ingress-controller publishes Ingresses (and HTTPRoutes) through pangolin-operator.
Every setting can come from a flag, an environment variable or a key of the YAML file
given by --config; a flag wins over a variable, which wins over the file.

Flags:
%s`, fs.FlagUsages())
	}
	return fs
}

func flagType(k kind) string {
	switch k {
	case kindBool:
		return "bool"
	case kindInt:
		return "int"
	case kindFloat:
		return "float"
	case kindDuration:
		return "duration"
	case kindList:
		return "strings"
	}
	return "string"
}

// defaultText is a default as a flag would be written.
func defaultText(k *key) string {
	switch d := k.def.(type) {
	case []string:
		return strings.Join(d, ",")
	case float64:
		return fmt.Sprint(d)
	case nil:
		return ""
	}
	return fmt.Sprint(printable(k.def))
}

// flagSuggestion adds "did you mean --x?" to an unknown-flag error.
func flagSuggestion(fs *pflag.FlagSet, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || len(ne.GetSpecifiedName()) < 2 {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if best := closest(ne.GetSpecifiedName(), names); best != "" {
		return fmt.Sprintf("; did you mean --%s?", best)
	}
	return ""
}

func (l *loader) printFlag() {
	f := l.fs.Lookup(FlagPrint)
	if !f.Changed {
		return
	}
	b, ok := coerce(&key{kind: kindBool}, f.Value.String())
	if !ok {
		l.probs.add("", "--%s = %q: %s", FlagPrint, f.Value.String(), wantBool)
		return
	}
	l.cfg.PrintConfig = b.(bool)
}

func parseEnviron(environ []string) map[string]string {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, seen := env[name]; !seen { // the first one wins, as with os.Getenv
			env[name] = val
		}
	}
	return env
}

// lookupEnv returns a variable that is set and not blank.
func (l *loader) lookupEnv(name string) (string, bool) {
	val := l.env[name]
	return val, strings.TrimSpace(val) != ""
}

// serviceLinkRE matches the variables Kubernetes injects for Services (a Service named
// pic-metrics gives PIC_METRICS_SERVICE_HOST), which are not typos.
var serviceLinkRE = regexp.MustCompile(`_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_[0-9]+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)?)$`)

// checkEnvNames reports PIC_ variables that look like a misspelt setting, which would
// otherwise be ignored without a word. Other unknown PIC_ variables are left alone.
func (l *loader) checkEnvNames() {
	known := []string{EnvConfigFile}
	for _, k := range keys {
		known = append(known, k.env...)
	}
	names := make([]string, 0, len(l.env))
	for name := range l.env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !strings.HasPrefix(name, "PIC_") || slices.Contains(known, name) || serviceLinkRE.MatchString(name) {
			continue
		}
		if best := closest(name, known); best != "" {
			l.probs.add("", "environment variable %s is not a setting (did you mean %s?)", name, best)
		}
	}
}

// readFile parses the configuration file, checks its keys, and gives it to viper.
func (l *loader) readFile() {
	origin := Origin{Kind: FromFlag, Name: "--" + FlagConfigFile}
	if f := l.fs.Lookup(FlagConfigFile); f.Changed {
		l.path = f.Value.String()
	} else if val, ok := l.lookupEnv(EnvConfigFile); ok {
		l.path, origin = strings.TrimSpace(val), Origin{Kind: FromEnv, Name: EnvConfigFile}
	}
	if l.path == "" {
		return
	}
	data, err := os.ReadFile(l.path)
	if err != nil {
		l.probs.add("", "configuration file (%s): %v", origin.where(), err)
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		l.probs.add("", "configuration file %s is not valid YAML: %v", l.path, err)
		return
	}
	if len(doc.Content) == 0 {
		return // an empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		if root.Tag != "!!null" {
			l.probs.add("", "configuration file %s:%d: want a mapping of keys such as \"defaultTunnel: default\", got %s", l.path, root.Line, describe(root))
		}
		return
	}
	before := len(l.probs)
	l.duplicates(root)
	l.walk(root, "")
	l.v.SetConfigType("yaml")
	if err := l.v.ReadConfig(bytes.NewReader(data)); err != nil && len(l.probs) == before {
		l.probs.add("", "configuration file %s: %v", l.path, err)
	}
}

// duplicates reports a key given twice in one mapping, which yaml.Node decoding accepts.
func (l *loader) duplicates(n *yaml.Node) {
	seen := map[string]int{}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			if first, dup := seen[c.Value]; dup {
				l.probs.add("", "%s: key %q is given twice (first on line %d); keep one", l.fileOrigin(c), c.Value, first)
			} else {
				seen[c.Value] = c.Line
			}
		}
		l.duplicates(c)
	}
}

// walk records the line and node of every known key under m and reports unknown ones.
func (l *loader) walk(m *yaml.Node, prefix string) {
	var known []string
	for _, k := range keys {
		if name, ok := strings.CutPrefix(k.name, prefix); ok {
			if head, _, nested := strings.Cut(name, "."); nested {
				name = head
			}
			if !slices.Contains(known, name) {
				known = append(known, name)
			}
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, vn := m.Content[i], m.Content[i+1]
		name := prefix + kn.Value
		switch {
		case !slices.Contains(known, kn.Value):
			hint := suggest(kn.Value, known)
			if hint == "" {
				hint = "; known keys here: " + strings.Join(known, ", ")
			}
			l.probs.add("", "%s: unknown key %q%s", Origin{Kind: FromFile, Name: l.path, Line: kn.Line}, name, hint)
		case isParent(name):
			switch vn = deref(vn); vn.Kind {
			case yaml.MappingNode:
				l.walk(vn, name+".")
			case yaml.ScalarNode:
				if vn.Tag == "!!null" {
					break // "leaderElection:" with nothing under it
				}
				fallthrough
			default:
				l.probs.add(name, "%s (%s) = %s: want a mapping with keys %s",
					name, Origin{Kind: FromFile, Name: l.path, Line: kn.Line}, describe(vn), strings.Join(childKeys(name), ", "))
			}
		case vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" && name != "tunnels":
			// "backendScheme:" with nothing after it: refuse it rather than read it as the default.
			k := keyByName(name)
			l.badAt(name, Origin{Kind: FromFile, Name: l.path, Line: kn.Line}, nil,
				fmt.Sprintf("no value is given; %s, or remove the key to use the default (%s)", k.want, scalarYAML(printable(k.def))))
		default:
			l.lines[name], l.nodes[name] = kn.Line, deref(vn)
		}
	}
}

// deref follows a YAML alias (*name) to the node it stands for.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// isParent reports whether name only groups other keys (leaderElection).
func isParent(name string) bool {
	return len(childKeys(name)) > 0
}

func childKeys(parent string) []string {
	var out []string
	for _, k := range keys {
		if child, ok := strings.CutPrefix(k.name, parent+"."); ok {
			out = append(out, child)
		}
	}
	return out
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

func (l *loader) originOf(k *key) Origin {
	if k.flag != "" && l.fs.Changed(k.flag) {
		return Origin{Kind: FromFlag, Name: "--" + k.flag}
	}
	for _, name := range k.env {
		if _, ok := l.lookupEnv(name); ok {
			return Origin{Kind: FromEnv, Name: name}
		}
	}
	if line, ok := l.lines[k.name]; ok {
		return Origin{Kind: FromFile, Name: l.path, Line: line}
	}
	return Origin{Kind: FromDefault}
}

// raw returns a key's value from the winning layer.
func (l *loader) raw(k *key) any {
	if v := l.v.Get(k.name); v != nil {
		return v
	}
	// viper finds nothing, not even the default, under a group whose value is not a
	// mapping ("leaderElection: true"); walk has reported that already.
	return k.def
}

// scalar reads one plain key into the Config.
func (l *loader) scalar(k *key) {
	raw := l.raw(k)
	v, ok := coerce(k, raw)
	if !ok {
		l.bad(k, l.orig[k.name], raw, k.want)
		return
	}
	if k.check != nil {
		if msg := k.check(v); msg != "" {
			l.bad(k, l.orig[k.name], raw, msg)
			return
		}
	}
	k.set(l.cfg, v)
}

// bad reports a bad value: `key (source) = value: what is wanted`.
func (l *loader) bad(k *key, o Origin, raw any, msg string) { l.badAt(k.name, o, raw, msg) }

// badAt reports a bad value of a key or of part of one (tunnels.edge-eu.namespace).
func (l *loader) badAt(name string, o Origin, raw any, msg string) {
	if raw == nil {
		l.probs.add(name, "%s (%s): %s", name, o.where(), msg)
		return
	}
	l.probs.add(name, "%s (%s) = %s: %s", name, o.where(), formatValue(raw), msg)
}

// unknownWhere names every way to set a key, for a value whose source is not known.
func unknownWhere(k *key) string {
	var ways []string
	if len(k.env) > 0 {
		ways = append(ways, k.env[0])
	}
	if k.flag != "" {
		ways = append(ways, "--"+k.flag)
	}
	if len(ways) == 0 {
		return "file only"
	}
	return strings.Join(ways, ", ")
}
