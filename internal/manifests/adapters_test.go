package manifests

import (
	"os"
	"slices"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
)

// adapterRoles is config/rbac/adapters.yaml: every registered source and sink, with
// the ClusterRoles of config/rbac it needs besides role.yaml, by directory, as the
// adapters declare them (plugin.Kinds.RBAC; the file is generated from the registry
// by go test ./builtin -update). This package may not import the adapters to ask them.
type adapterRoles struct {
	Sources map[string][]string `json:"sources"`
	Sinks   map[string][]string `json:"sinks"`
}

// adapters reads config/rbac/adapters.yaml once; a file that cannot be read fails
// every test that needs it.
var adapters = sync.OnceValue(func() adapterRoles {
	data, err := os.ReadFile(repoPath("config", "rbac", "adapters.yaml"))
	if err != nil {
		panic(err)
	}
	var a adapterRoles
	if err := yaml.UnmarshalStrict(data, &a); err != nil {
		panic(err)
	}
	return a
})

// needsRole reports whether one of sources needs the ClusterRole of config/rbac/dir.
func needsRole(sources []string, dir string) bool {
	return slices.ContainsFunc(sources, func(s string) bool { return slices.Contains(adapters().Sources[s], dir) })
}

// adapterRoleFiles are the ClusterRoles the adapters declare: each sink's and each
// source's, and, under a sink's directory, what it needs for a source's (when the file
// exists), each with when an installation running cfg must render it.
func adapterRoleFiles() []clusterRoleFile {
	a := adapters()
	var sinkDirs, sourceDirs []string
	for _, dirs := range a.Sinks {
		sinkDirs = appendNew(sinkDirs, dirs...)
	}
	for _, dirs := range a.Sources {
		sourceDirs = appendNew(sourceDirs, dirs...)
	}
	slices.Sort(sinkDirs)
	slices.Sort(sourceDirs)
	runsSink := func(cfg *config.Config, dir string) bool { return slices.Contains(a.Sinks[cfg.Sink], dir) }
	var out []clusterRoleFile
	for _, d := range sinkDirs {
		out = append(out, clusterRoleFile{"-" + d, []string{d, "role.yaml"}, func(cfg *config.Config) bool { return runsSink(cfg, d) }, false})
	}
	for _, s := range sourceDirs {
		out = append(out, clusterRoleFile{"-" + s, []string{s, "role.yaml"}, func(cfg *config.Config) bool { return needsRole(cfg.Sources, s) }, false})
	}
	for _, d := range sinkDirs {
		for _, s := range sourceDirs {
			if _, err := os.Stat(repoPath("config", "rbac", d, s, "role.yaml")); err != nil {
				continue
			}
			out = append(out, clusterRoleFile{"-" + d + "-" + s, []string{d, s, "role.yaml"}, func(cfg *config.Config) bool {
				return runsSink(cfg, d) && needsRole(cfg.Sources, s)
			}, false})
		}
	}
	return out
}

func appendNew(list []string, more ...string) []string {
	for _, m := range more {
		if !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}
