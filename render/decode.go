package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Manifest is an object read from an input, and where.
type Manifest struct {
	Object client.Object
	// Where is "file:line (document n)", the start of the object's document.
	Where string
}

// InputError is input that cannot be read: where, and why.
type InputError struct {
	File string
	Line int // 0 when unknown
	// Document is the 1-based index of the document in the file, 0 when unknown.
	Document int
	Err      error
}

func (e *InputError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Document > 0 {
		where += fmt.Sprintf(" (document %d)", e.Document)
	}
	return where + ": " + e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// Accept says which objects to read, and as what: the kind to decode a document of
// kind gvk into, and whether to read it at all. A document it returns an error for
// fails the input.
type Accept func(gvk schema.GroupVersionKind) (schema.GroupVersionKind, bool, error)

// Decode reads the objects of data, named file in messages: YAML documents separated
// by "---" lines, or a stream of JSON objects; a kind ending in "List" stands for its
// items. A document accept refuses is skipped.
func Decode(file string, data []byte, scheme *runtime.Scheme, accept Accept) ([]Manifest, error) {
	docs, err := split(file, data)
	if err != nil {
		return nil, err
	}
	d := decoder{file: file, scheme: scheme, accept: accept, codecs: serializer.NewCodecFactory(scheme)}
	var out []Manifest
	for _, doc := range docs {
		objs, err := d.document(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// document is one YAML document or JSON value of an input, as JSON.
type document struct {
	line, index int
	json        []byte
}

// yamlLine finds the line a YAML parser's message names, relative to its document.
var yamlLine = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): `)

// split cuts data into documents, each with the line it starts on.
func split(file string, data []byte) ([]document, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if bytes.HasPrefix(trimmed, []byte("{")) {
		return splitJSON(file, data)
	}
	var (
		docs  []document
		start = 1
		cur   [][]byte
	)
	flush := func() error {
		body := bytes.Join(cur, nil)
		if !hasContent(body) {
			return nil
		}
		index := len(docs) + 1
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			ie := &InputError{File: file, Line: start, Document: index, Err: errors.New("invalid YAML: " + err.Error())}
			if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
				n, _ := strconv.Atoi(m[1])
				ie.Line, ie.Err = start+n-1, errors.New("invalid YAML: "+strings.TrimPrefix(err.Error(), m[0]))
			}
			return ie
		}
		docs = append(docs, document{line: start, index: index, json: j})
		return nil
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		if isSeparator(l) {
			if err := flush(); err != nil {
				return nil, err
			}
			cur, start = nil, i+2
			continue
		}
		cur = append(cur, l)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return docs, nil
}

// isSeparator reports whether a line is "---", alone or followed by a comment.
func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// hasContent reports whether a YAML document has anything but blank lines and comments.
func hasContent(body []byte) bool {
	for l := range bytes.SplitSeq(body, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return true
		}
	}
	return false
}

// splitJSON reads a stream of JSON values.
func splitJSON(file string, data []byte) ([]document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []document
	for {
		var raw json.RawMessage
		offset := dec.InputOffset()
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		start := lineAt(data, offset+int64(len(data[offset:])-len(bytes.TrimLeft(data[offset:], " \t\r\n"))))
		if err != nil {
			ie := &InputError{File: file, Line: start, Document: len(docs) + 1, Err: errors.New("invalid JSON: " + err.Error())}
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				ie.Line = lineAt(data, syntax.Offset)
			}
			return nil, ie
		}
		docs = append(docs, document{line: start, index: len(docs) + 1, json: raw})
	}
}

// lineAt is the 1-based line of a byte offset.
func lineAt(data []byte, offset int64) int {
	offset = min(offset, int64(len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

type decoder struct {
	file   string
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
	accept Accept
}

// document decodes one document: an object, a list of them, or nothing.
func (d decoder) document(doc document) ([]Manifest, error) {
	fail := func(format string, args ...any) error {
		return &InputError{File: d.file, Line: doc.line, Document: doc.index, Err: fmt.Errorf(format, args...)}
	}
	if bytes.Equal(bytes.TrimSpace(doc.json), []byte("null")) {
		return nil, nil
	}
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc.json, &head); err != nil {
		return nil, fail("not a Kubernetes object: %v", err)
	}
	if head.APIVersion == "" || head.Kind == "" {
		return nil, fail("not a Kubernetes object: apiVersion and kind are required")
	}
	if strings.HasSuffix(head.Kind, "List") && head.Items != nil {
		var out []Manifest
		for i, item := range head.Items {
			m, err := d.object(doc, item, fmt.Sprintf("item %d of the %s", i+1, head.Kind))
			if err != nil {
				return nil, err
			}
			out = append(out, m...)
		}
		return out, nil
	}
	return d.object(doc, doc.json, "")
}

// object decodes one object, if accept wants it.
func (d decoder) object(doc document, data []byte, item string) ([]Manifest, error) {
	where := fmt.Sprintf("%s:%d (document %d", d.file, doc.line, doc.index)
	if item != "" {
		where += ", " + item
	}
	where += ")"
	fail := func(format string, args ...any) error {
		err := fmt.Errorf(format, args...)
		if item != "" {
			err = fmt.Errorf("%s: %w", item, err)
		}
		return &InputError{File: d.file, Line: doc.line, Document: doc.index, Err: err}
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fail("not a Kubernetes object: %v", err)
	}
	apiVersion, _ := fields["apiVersion"].(string)
	kind, _ := fields["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" {
		return nil, fail("not a Kubernetes object: apiVersion %q, kind %q", apiVersion, kind)
	}
	as, ok, err := d.accept(gv.WithKind(kind))
	if err != nil {
		return nil, fail("%v", err)
	}
	if !ok {
		return nil, nil
	}
	if as != gv.WithKind(kind) {
		fields["apiVersion"], fields["kind"] = as.GroupVersion().String(), as.Kind
		if data, err = json.Marshal(fields); err != nil {
			return nil, fail("%v", err)
		}
	}
	obj, _, err := d.codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fail("%s %s: %v", kind, apiVersion, err)
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, fail("%s %s is not an object with metadata", kind, apiVersion)
	}
	return []Manifest{{Object: o, Where: where}}, nil
}
