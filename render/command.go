package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stefb69/pangolin-ingress-controller/builtin"
	"github.com/stefb69/pangolin-ingress-controller/internal/config"
	"github.com/stefb69/pangolin-ingress-controller/internal/hostname"
	"github.com/stefb69/pangolin-ingress-controller/internal/plugin"
)

// Exit statuses of Main.
const (
	ExitOK      = 0 // rendered
	ExitWarning = 1 // rendered, with Warnings, and --fail-on-warning
	ExitUsage   = 2 // bad flags or configuration
	ExitInput   = 3 // unreadable input
	ExitFailure = 4 // the rendering itself failed: a bug
)

const usageHead = `Usage: manager render -f PATH [-f PATH ...] [--fail-on-warning] [--crd-variant fork|original] [--config FILE]
                      [--sink pangolinresource|pangolin] [--domain DOMAIN ...]

Render prints what the Pangolin Ingress Controller would publish for a set of
manifests, and its Warnings about them, without a cluster: PIC's own sources, engine
and sink run over the manifests instead of an API server. With the pangolinresource
sink (the default) that is the PangolinResources PIC would write; with the pangolin
sink (direct mode), the Pangolin resources and targets it would create, computed by
sending its requests to an in-memory Pangolin.

Input: files, directories (read recursively: *.yaml, *.yml, *.json) or - for standard
input; multi-document YAML or JSON, kind: List included, as kustomize build and helm
template print them. Read: Ingress, IngressClass, Service, HTTPRoute, TCPRoute,
UDPRoute, Gateway, GatewayClass, ReferenceGrant, Namespace, PangolinTunnel; other kinds
are ignored. An
object without a namespace is in "default".

Tunnels: when the input holds no PangolinTunnel at all, every tunnel is assumed to exist
and be Ready (tunnels usually live outside an application's manifests). When it holds
some, a tunnel missing from it is TunnelNotFound, as in a cluster.

Host conflicts: the oldest claim wins, as in a cluster: by metadata.creationTimestamp
where the input has one (an object without one is newer than every object with one),
then by namespace/name. UIDs come from the input's metadata.uid, or else from each
object's kind, namespace and name: a cluster's differ.

Direct mode: every site a tunnel names exists and is online. A managed site of the
configuration (managedSite) is printed after the resources: its name, online (assumed),
the Newt version of the configured image, and its agent's Deployment; never credentials,
which PIC draws only when it creates the site. The org's domains are
those --domain gives; without it, the registrable domain of every host (its public
suffix and one label) and every domain the domain-name annotation names. Give the
org's domains to see hosts split as Pangolin will split them (apps.example.com as a
domain), and DomainNotFound for a host under none. The API key, the CA bundle and
Pangolin's address are neither needed nor read.

Output: the PangolinResources as YAML on standard output, sorted by namespace and name
(direct mode: the Pangolin resources, sorted by host); one line per Warning on standard
error, sorted:
  Warning <Kind> <namespace>/<name> <Reason>: <message>

Exit status: 0 rendered; 1 a Warning, with --fail-on-warning; 2 bad flags or
configuration; 3 unreadable input (the file and line say where); 4 the rendering failed.

Flags:
`

// Main is `manager render`: args are the command line after "render". It returns the
// exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("render", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	files := fs.StringArrayP("filename", "f", nil, "a manifest file, a directory (recursively), or - for standard input; repeatable")
	failOnWarning := fs.Bool("fail-on-warning", false, "exit with status 1 when PIC would emit a Warning")
	variant := fs.String("crd-variant", "fork", "the pangolin-operator CRD variant to write for: fork (targets, access control) or original")
	configFile := fs.String("config", "", "PIC's configuration file (tunnels, defaults, sources, sink), with PIC_* variables over it; PIC's defaults, with every source, without it")
	sink := fs.String("sink", "", "the sink to render for: pangolinresource or pangolin (direct mode); the configuration's without it")
	domains := fs.StringArray("domain", nil, "a domain of the Pangolin org, with sink pangolin; repeatable (default: derived from the hosts)")
	usage := func(w io.Writer) {
		fmt.Fprint(w, usageHead)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	bad := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "render: "+format+"\nSee 'manager render --help'.\n", args...)
		return ExitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			usage(stdout)
			return ExitOK
		}
		return bad("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument %q: name inputs with -f", fs.Arg(0))
	case len(*files) == 0:
		return bad("no input: name manifests with -f PATH, or -f - for standard input")
	case len(slices.DeleteFunc(slices.Clone(*files), func(f string) bool { return f != "-" })) > 1:
		return bad("-f - is given twice: standard input can be read once")
	}
	cfg, err := loadConfig(*configFile, *sink)
	if err != nil {
		return bad("%v", err)
	}
	var orgDomains []string
	for _, d := range *domains {
		domain, problem := hostname.Normalize(d, "")
		if problem != nil {
			return bad("--domain %q: %s", d, problem.Message)
		}
		orgDomains = append(orgDomains, domain)
	}

	objects, tunnels, err := read(*files, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "render: %v\n", err)
		return ExitInput
	}
	ctx := log.IntoContext(context.Background(), logr.Discard())
	opts := Options{Config: cfg, CRDVariant: *variant, AssumeTunnels: !tunnels, Domains: orgDomains}
	res, err := Run(ctx, objects, opts)
	switch {
	case errors.Is(err, plugin.ErrBadOption):
		// The sink refused an option given on the command line.
		return bad("%v", strings.TrimPrefix(err.Error(), plugin.ErrBadOption.Error()+": "))
	case err != nil:
		fmt.Fprintf(stderr, "render: %v\n", err)
		return ExitFailure
	}
	var out bytes.Buffer
	if err := writeDocuments(&out, res.Published); err != nil {
		fmt.Fprintf(stderr, "render: %v\n", err)
		return ExitFailure
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "render: write the output: %v\n", err)
		return ExitFailure
	}
	warnings := res.Warnings()
	for _, w := range warnings {
		fmt.Fprintln(stderr, w.Line())
	}
	if *failOnWarning && len(warnings) > 0 {
		return ExitWarning
	}
	return ExitOK
}

// loadConfig reads PIC's configuration as `manager --config file` does: the file, and
// PIC_* variables over it, with sink, when given, over both. What only reaching Pangolin
// needs is not read (config.LoadOffline). Without a file, PIC's defaults with every
// source: the input says which kinds there are.
func loadConfig(file, sink string) (*config.Config, error) {
	if file == "" {
		cfg := config.Default()
		cfg.Sources = builtin.SourceNames()
		if sink != "" {
			if !slices.Contains(builtin.SinkNames(), sink) {
				return nil, fmt.Errorf("--sink %q: want one of %s", sink, strings.Join(builtin.SinkNames(), ", "))
			}
			cfg.Sink = sink
		}
		return cfg, nil
	}
	args := []string{"--" + config.FlagConfigFile + "=" + file}
	if sink != "" {
		args = append(args, "--sink="+sink)
	}
	cfg, _, err := config.LoadOffline(args, builtin.Names())
	return cfg, err
}

// read reads every input, in the order given; a directory's files in lexical order.
func read(paths []string, stdin io.Reader) ([]client.Object, bool, error) {
	scheme, err := builtin.Registry.Scheme()
	if err != nil {
		return nil, false, err
	}
	kinds, err := inputKindsOf(builtin.Registry, scheme)
	if err != nil {
		return nil, false, err
	}
	var manifests []Manifest
	add := func(name string, data []byte) error {
		ms, err := Decode(name, data, scheme, kinds.accept)
		manifests = append(manifests, ms...)
		return err
	}
	for _, p := range paths {
		if p == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, false, fmt.Errorf("read standard input: %w", err)
			}
			if err := add("stdin", data); err != nil {
				return nil, false, err
			}
			continue
		}
		files, err := manifestFiles(p)
		if err != nil {
			return nil, false, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, false, err
			}
			if err := add(f, data); err != nil {
				return nil, false, err
			}
		}
	}
	return prepare(manifests, kinds)
}

// manifestFiles is path if it is a file, or the manifests under it if it is a directory.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	return files, err
}
