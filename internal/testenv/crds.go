package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	tunnelv1alpha1 "github.com/stefb69/pangolin-ingress-controller/internal/apis/tunnel/v1alpha1"
)

// Names of the two pangolin-operator CRD variants.
const (
	VariantOriginal = "original" // single spec.target
	VariantFork     = "fork"     // spec.targets[] with path routing
	// VariantNone is no operator at all: the direct sink's world, without PIC's CRDs.
	VariantNone = "none"
)

// Variant is one pangolin-operator CRD set that PIC must work with.
type Variant struct {
	Name   string // VariantOriginal or VariantFork
	CRDDir string // absolute path of the verbatim CRD copies
}

// Variants returns both operator variants, original first. It panics if the repository
// root cannot be found, which only happens when the source tree is broken.
func Variants() []Variant {
	root, err := RepoRoot()
	if err != nil {
		panic(err)
	}
	dir := filepath.Join(root, "config", "crd", "operator")
	return []Variant{
		{Name: VariantOriginal, CRDDir: filepath.Join(dir, VariantOriginal)},
		{Name: VariantFork, CRDDir: filepath.Join(dir, VariantFork)},
	}
}

// VariantByName returns the variant called name, for suites that take it from a flag.
func VariantByName(name string) (Variant, error) {
	for _, v := range Variants() {
		if v.Name == name {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("find operator variant %q: want %q or %q", name, VariantOriginal, VariantFork)
}

var (
	gatewayOnce sync.Once
	gatewayDir  string
	gatewayErr  error
)

// GatewayAPICRDDir returns the standard-channel Gateway API CRD folder of the
// sigs.k8s.io/gateway-api version in go.mod, so the CRDs always match the Go types.
// The folder also holds a ValidatingAdmissionPolicy: install through GatewayAPICRDFiles.
func GatewayAPICRDDir() (string, error) {
	gatewayOnce.Do(func() {
		gatewayDir, gatewayErr = findGatewayAPICRDDir()
	})
	return gatewayDir, gatewayErr
}

func findGatewayAPICRDDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = root
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("locate gateway-api module: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	modDir := strings.TrimSpace(stdout.String())
	if modDir == "" {
		// go list prints an empty Dir when the module is not downloaded yet.
		return "", errors.New("locate gateway-api module: not in the module cache, run go mod download")
	}
	dir := filepath.Join(modDir, "config", "crd", "standard")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("locate gateway-api CRDs: %w", err)
	}
	return dir, nil
}

// GatewayAPICRDFiles returns the CRD files of GatewayAPICRDDir, without the other
// manifests that share the folder.
func GatewayAPICRDFiles() ([]string, error) {
	dir, err := GatewayAPICRDDir()
	if err != nil {
		return nil, err
	}
	return CRDFiles(dir)
}

// CRDFiles returns the YAML files in dir that hold at least one
// CustomResourceDefinition. Anything else (policies, bindings) is left out because
// installing it would make the test cluster differ from what the tests declare.
func CRDFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list CRD files: %w", err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || (filepath.Ext(e.Name()) != ".yaml" && filepath.Ext(e.Name()) != ".yml") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		ok, err := holdsCRD(path)
		if err != nil {
			return nil, err
		}
		if ok {
			files = append(files, path)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("list CRD files: none in %s", dir)
	}
	return files, nil
}

func holdsCRD(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read CRD file: %w", err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read CRD file %s: %w", path, err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return false, fmt.Errorf("parse CRD file %s: %w", path, err)
		}
		if tm.Kind == "CustomResourceDefinition" && strings.HasPrefix(tm.APIVersion, "apiextensions.k8s.io/") {
			return true, nil
		}
	}
}

// crdPaths lists the files to install for a variant (nil for none) and, optionally,
// Gateway API.
func crdPaths(variant *Variant, gatewayAPI, accessPolicies bool) ([]string, error) {
	var paths []string
	if accessPolicies {
		root, err := RepoRoot()
		if err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(root, "config", "crd", "pic", "pic.pangolin.io_accesspolicies.yaml"))
	}
	if variant != nil && variant.CRDDir != "" {
		files, err := CRDFiles(variant.CRDDir)
		if err != nil {
			return nil, fmt.Errorf("list %s operator CRDs: %w", variant.Name, err)
		}
		paths = append(paths, files...)
	}
	if gatewayAPI {
		files, err := GatewayAPICRDFiles()
		if err != nil {
			return nil, err
		}
		paths = append(paths, files...)
	}
	return paths, nil
}

// Backend is a PangolinResource's first target as ip:port, whichever CRD variant wrote
// it (the fork's targets[] or the original's target), or "" without one.
func Backend(r tunnelv1alpha1.PangolinResource) string {
	target := r.Spec.Target
	if len(r.Spec.Targets) > 0 {
		target = &r.Spec.Targets[0]
	}
	if target == nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", target.IP, target.Port)
}

// ForeignResource is a PangolinResource for host under example.com as a user or another
// tool would write it, valid for the variant (fork: targets[], original: target), with
// no label, annotation or owner of PIC's: the tests' decoys start from it.
func ForeignResource(namespace, name, host string, fork bool) *tunnelv1alpha1.PangolinResource {
	r := &tunnelv1alpha1.PangolinResource{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: tunnelv1alpha1.PangolinResourceSpec{
			Enabled: ptr.To(true), Protocol: tunnelv1alpha1.ProtocolHTTP,
			TunnelRef:  &tunnelv1alpha1.TunnelRef{Name: "default"},
			HTTPConfig: &tunnelv1alpha1.HTTPConfig{DomainName: "example.com", Subdomain: strings.TrimSuffix(host, ".example.com")},
		},
	}
	target := tunnelv1alpha1.Target{IP: "10.0.0.1", Port: 80, Method: "http"}
	if fork {
		r.Spec.Targets = []tunnelv1alpha1.Target{target}
	} else {
		r.Spec.Target = &target
	}
	return r
}
