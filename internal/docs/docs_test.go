package docs

import (
	"bytes"
	"errors"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/stefb69/pangolin-ingress-controller/internal/config"
)

// repoPath is a path relative to the repository root (go test runs in internal/docs).
func repoPath(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(repoPath("docs", name))
	require.NoError(t, err)
	return string(data)
}

var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// codeSpans returns the set of `code` spans of a Markdown text; a span that reads
// `key: value` also counts as its key.
func codeSpans(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
		if key, _, ok := strings.Cut(m[1], ": "); ok {
			out[key] = true
		}
	}
	return out
}

// tableColumn returns the code spans in one column of every Markdown table whose header
// row has a cell named header.
func tableColumn(text, header string) []string {
	var out []string
	col := -1
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			col = -1
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if col < 0 {
			col = slices.IndexFunc(cells, func(c string) bool { return strings.TrimSpace(c) == header })
			if col < 0 {
				col = -2 // a table without that column: skip it
			}
			continue
		}
		if col < 0 || col >= len(cells) || strings.Trim(strings.TrimSpace(cells[col]), "-:") == "" {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[col], -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// picConstants returns the string constants of internal/pic/pic.go whose names start
// with one of prefixes, by name, as the compiler evaluates them.
func picConstants(t *testing.T, prefixes ...string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, repoPath("internal", "pic", "pic.go"), nil, 0)
	require.NoError(t, err)
	pkg, err := (&types.Config{}).Check("pic", fset, []*ast.File{file}, nil)
	require.NoError(t, err, "internal/pic/pic.go imports nothing, so it type-checks alone")
	out := map[string]string{}
	for _, name := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok || c.Val().Kind() != constant.String {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				out[name] = constant.StringVal(c.Val())
			}
		}
	}
	require.NotEmpty(t, out, "constants %v in internal/pic/pic.go", prefixes)
	return out
}

// TestAnnotationsDoc: every annotation and label of internal/pic is in
// docs/annotations.md, and every key of PIC's prefixes documented there is one of them.
func TestAnnotationsDoc(t *testing.T) {
	doc := readDoc(t, "annotations.md")
	spans := codeSpans(doc)
	known := map[string]bool{}
	for name, value := range picConstants(t, "Annotation", "Label", "LegacyClassAnnotation") {
		if name == "AnnotationPrefix" {
			continue // a prefix, not a key
		}
		known[value] = true
		assert.True(t, spans[value], "pic.%s (%s) is not documented in docs/annotations.md", name, value)
	}
	ours := regexp.MustCompile(`^(pangolin|pic)\.ingress\.k8s\.io/[a-z0-9-]+$`)
	for span := range spans {
		key, _, _ := strings.Cut(span, ":") // `enabled: "false"` style spans
		if ours.MatchString(key) {
			assert.True(t, known[key], "docs/annotations.md documents %s, which internal/pic does not define", key)
		}
	}
}

// gatewayReasons are the Gateway API route condition reasons PIC also sends as Warning
// events on HTTPRoutes, by the name sources/gatewayapi uses.
var gatewayReasons = map[string]gatewayv1.RouteConditionReason{
	"RouteReasonNotAllowedByListeners":      gatewayv1.RouteReasonNotAllowedByListeners,
	"RouteReasonNoMatchingParent":           gatewayv1.RouteReasonNoMatchingParent,
	"RouteReasonNoMatchingListenerHostname": gatewayv1.RouteReasonNoMatchingListenerHostname,
	"RouteReasonUnsupportedValue":           gatewayv1.RouteReasonUnsupportedValue,
	"RouteReasonRefNotPermitted":            gatewayv1.RouteReasonRefNotPermitted,
	"RouteReasonBackendNotFound":            gatewayv1.RouteReasonBackendNotFound,
	"RouteReasonInvalidKind":                gatewayv1.RouteReasonInvalidKind,
}

// goFiles returns the non-test Go files under the directories that make PIC's binary.
func goFiles(t *testing.T, dirs ...string) map[string]*ast.File {
	t.Helper()
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(repoPath(dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			out[path] = f
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// TestEventsDoc: every event reason of internal/pic is in docs/events.md, and every
// reason its tables list is one of them, or a Gateway API reason sources/gatewayapi uses.
func TestEventsDoc(t *testing.T) {
	doc := readDoc(t, "events.md")
	spans := codeSpans(doc)
	known := map[string]bool{}
	for name, value := range picConstants(t, "Reason") {
		known[value] = true
		assert.True(t, spans[value], "pic.%s (%s) is not documented in docs/events.md", name, value)
	}
	used := map[string]bool{}
	for _, f := range goFiles(t, "sources") {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				used[sel.Sel.Name] = true
			}
			return true
		})
	}
	for name, value := range gatewayReasons {
		require.True(t, used[name], "gatewayv1.%s is no longer used by sources/: drop it from gatewayReasons and docs/events.md", name)
		known[string(value)] = true
		assert.True(t, spans[string(value)], "the HTTPRoute reason %s is not documented in docs/events.md", value)
	}
	reasons := tableColumn(doc, "reason")
	require.NotEmpty(t, reasons, "docs/events.md has a table with a reason column")
	for _, r := range reasons {
		assert.True(t, known[r], "docs/events.md lists the reason %s, which PIC does not emit", r)
	}
}

// helpText is what `manager --help` prints.
func helpText(t *testing.T) string {
	t.Helper()
	// config.Load prints usage on os.Stderr: read it through a pipe.
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stderr := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		data, _ := io.ReadAll(r)
		done <- data
	}()
	_, _, loadErr := config.Load([]string{"--help"}, config.Plugins{})
	os.Stderr = stderr
	require.NoError(t, w.Close())
	out := <-done
	require.True(t, errors.Is(loadErr, pflag.ErrHelp), "--help returns pflag.ErrHelp, got %v", loadErr)
	require.NotEmpty(t, out)
	return string(out)
}

var (
	helpFlag    = regexp.MustCompile(`^\s+--([a-z0-9-]+)`)
	helpEnv     = regexp.MustCompile(`\[env ((?:[A-Z0-9_]+)(?: or [A-Z0-9_]+)*)`)
	helpFileKey = regexp.MustCompile(`file key ([A-Za-z0-9.]+)`)
	printedKey  = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*):`)
)

// settings lists the flags, environment variables and file keys of PIC's configuration
// from `manager --help` and `manager --print-config`.
func settings(t *testing.T) (flags, env, fileKeys map[string]bool) {
	t.Helper()
	flags, env, fileKeys = map[string]bool{}, map[string]bool{}, map[string]bool{}
	// The API key has a variable and nothing else (no flag, no file key): --help and
	// --print-config name it only in prose.
	env[config.EnvAPIKey] = true
	for line := range strings.SplitSeq(helpText(t), "\n") {
		m := helpFlag.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		flags[m[1]] = true
		if m := helpEnv.FindStringSubmatch(line); m != nil {
			for _, name := range strings.Split(m[1], " or ") {
				env[name] = true
			}
		}
		if m := helpFileKey.FindStringSubmatch(line); m != nil {
			fileKeys[m[1]] = true
		}
	}
	// --print-config shows the file keys that have no flag (tunnels).
	var printed bytes.Buffer
	require.NoError(t, config.Print(&printed, config.Default(), nil))
	for line := range strings.SplitSeq(printed.String(), "\n") {
		if m := printedKey.FindStringSubmatch(line); m != nil && !isGroup(m[1], fileKeys) {
			fileKeys[m[1]] = true
		}
	}
	require.NotEmpty(t, flags)
	require.NotEmpty(t, env)
	require.NotEmpty(t, fileKeys)
	return flags, env, fileKeys
}

// isGroup reports whether key is the parent of dotted keys, such as leaderElection.
func isGroup(key string, keys map[string]bool) bool {
	for k := range keys {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// TestConfigurationDoc: every flag, environment variable and file key of PIC's
// configuration is in docs/configuration.md, and every one documented there exists.
func TestConfigurationDoc(t *testing.T) {
	doc := readDoc(t, "configuration.md")
	spans := codeSpans(doc)
	flags, env, fileKeys := settings(t)
	for f := range flags {
		assert.True(t, spans["--"+f], "the flag --%s is not documented in docs/configuration.md", f)
	}
	for e := range env {
		assert.True(t, spans[e], "the environment variable %s is not documented in docs/configuration.md", e)
	}
	documentedKeys := map[string]bool{}
	for _, k := range tableColumn(doc, "file key") {
		documentedKeys[k] = true
		assert.True(t, fileKeys[k], "docs/configuration.md documents the file key %s, which PIC does not read", k)
	}
	for k := range fileKeys {
		assert.True(t, documentedKeys[k], "the file key %s is not in docs/configuration.md's table", k)
	}
	envName := regexp.MustCompile(`^(PIC|PANGOLIN)_[A-Z0-9_]+$`)
	for span := range spans {
		for _, word := range strings.Fields(span) {
			word = strings.Trim(word, ",")
			if name, ok := strings.CutPrefix(word, "--"); ok && name != "" {
				name, _, _ = strings.Cut(name, "=")
				assert.True(t, flags[name] || name == "help", "docs/configuration.md documents the flag --%s, which PIC does not have", name)
			}
			name, _, _ := strings.Cut(word, "=")
			if envName.MatchString(name) {
				assert.True(t, env[name], "docs/configuration.md documents the variable %s, which PIC does not read", name)
			}
		}
	}
}

// registeredMetrics returns the names of the Prometheus metrics declared in PIC's code:
// every prometheus.*Opts literal with a Name.
func registeredMetrics(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for path, f := range goFiles(t, "cmd", "internal", "sources", "sinks") {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			sel, ok := lit.Type.(*ast.SelectorExpr)
			if !ok || !strings.HasSuffix(sel.Sel.Name, "Opts") {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "prometheus" {
				return true
			}
			parts := map[string]string{}
			for _, elt := range lit.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, _ := kv.Key.(*ast.Ident)
				if key == nil || (key.Name != "Name" && key.Name != "Namespace" && key.Name != "Subsystem") {
					continue
				}
				bl, ok := kv.Value.(*ast.BasicLit)
				if !ok || bl.Kind != token.STRING {
					t.Errorf("%s: a metric's %s is not a string literal; teach registeredMetrics to read it", path, key.Name)
					continue
				}
				parts[key.Name], _ = strconv.Unquote(bl.Value)
			}
			if parts["Name"] != "" {
				var name []string
				for _, p := range []string{parts["Namespace"], parts["Subsystem"], parts["Name"]} {
					if p != "" {
						name = append(name, p)
					}
				}
				out[strings.Join(name, "_")] = path
			}
			return true
		})
	}
	require.NotEmpty(t, out)
	return out
}

// TestMetricsDoc: every metric PIC registers is in docs/metrics.md, and every pic_
// metric documented there is registered.
func TestMetricsDoc(t *testing.T) {
	doc := readDoc(t, "metrics.md")
	spans := codeSpans(doc)
	metrics := registeredMetrics(t)
	for name, path := range metrics {
		assert.True(t, spans[name], "the metric %s (%s) is not documented in docs/metrics.md", name, path)
	}
	documented := tableColumn(doc, "metric")
	require.NotEmpty(t, documented, "docs/metrics.md has a table with a metric column")
	for _, name := range documented {
		_, ok := metrics[name]
		assert.True(t, ok, "docs/metrics.md documents %s, which PIC does not register", name)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s#]+)(#[^)\s]*)?\)`)

// TestDocLinks: every relative link of the README and docs/ points at a file of the
// repository, and every #anchor at a heading of its page.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob(repoPath("docs", "*.md"))
	require.NoError(t, err)
	pages = append(pages, repoPath("README.md"))
	for _, page := range pages {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			link, anchor := m[1], strings.TrimPrefix(m[2], "#")
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target := filepath.Join(filepath.Dir(page), link)
			info, err := os.Stat(target)
			if !assert.NoError(t, err, "%s links to %s", page, link) || info.IsDir() || anchor == "" {
				continue
			}
			text, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Contains(t, headingAnchors(string(text)), anchor, "%s links to %s#%s, which has no such heading", page, link, anchor)
		}
	}
}

// headingAnchors returns the anchors GitHub gives a page's headings: lower case, spaces
// as dashes, punctuation dropped.
func headingAnchors(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestTheSourceWalkthroughQuotesTheToySource: the code docs/development.md quotes in
// "Adding a source" is the toy source's (sources/example) and its registration line,
// verbatim, so that the walkthrough and the package the tests run cannot drift.
func TestTheSourceWalkthroughQuotesTheToySource(t *testing.T) {
	doc := readDoc(t, "development.md")
	start := strings.Index(doc, "### Adding a source")
	require.GreaterOrEqual(t, start, 0, "docs/development.md has a section Adding a source")
	section := doc[start:]
	if end := strings.Index(section[1:], "\n### "); end >= 0 {
		section = section[:end+1]
	}
	var code []string
	for _, f := range []string{
		repoPath("sources", "example", "source.go"),
		repoPath("render", "toysource_test.go"),
		repoPath("integration", "toysource_test.go"),
	} {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		code = append(code, string(data))
	}
	blocks := goBlocks(section)
	require.NotEmpty(t, blocks, "the walkthrough quotes the toy source")
	for _, block := range blocks {
		assert.True(t, slices.ContainsFunc(code, func(c string) bool { return strings.Contains(c, block) }),
			"docs/development.md quotes code that is not the toy source's:\n%s", block)
	}
}

// goBlocks are the fenced Go blocks of text, each without the indentation its lines
// share (a block inside a list item).
func goBlocks(text string) []string {
	var out []string
	var block []string
	indent, in := "", false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case !in && trimmed == "```go":
			in, indent, block = true, line[:len(line)-len(trimmed)], nil
		case in && trimmed == "```":
			in = false
			out = append(out, strings.Join(block, "\n"))
		case in:
			block = append(block, strings.TrimPrefix(line, indent))
		}
	}
	return out
}
