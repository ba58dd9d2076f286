package pangolinapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	// DefaultTimeout bounds every request. A timeout is never optional: the real server
	// leaves some malformed requests (an empty blueprint) unanswered forever.
	DefaultTimeout = 10 * time.Second
	// DefaultPageSize is the page size of list calls. Pangolin's own defaults differ per
	// endpoint (20 for resources and sites, 1000 for domains and targets).
	DefaultPageSize = 500

	// maxResponse caps how much of a response is read, so a misbehaving server cannot
	// exhaust the controller's memory.
	maxResponse = 16 << 20
	redacted    = "[redacted]"
)

// Results passed to Config.Observe.
const (
	ResultSuccess        = "success"
	ResultClientError    = "client_error"    // 4xx
	ResultServerError    = "server_error"    // 5xx, or a 2xx whose body cannot be decoded
	ResultTransportError = "transport_error" // no HTTP answer: connection, TLS, timeout
)

// Operation names passed to Config.Observe and carried by APIError.
const (
	OpListDomains    = "listDomains"
	OpListSites      = "listSites"
	OpGetSite        = "getSite"
	OpListResources  = "listResources"
	OpGetResource    = "getResource"
	OpCreateResource = "createResource"
	OpUpdateResource = "updateResource"
	OpDeleteResource = "deleteResource"
	OpListTargets    = "listTargets"
	OpGetTarget      = "getTarget"
	OpCreateTarget   = "createTarget"
	OpUpdateTarget   = "updateTarget"
	OpDeleteTarget   = "deleteTarget"

	// Access control (access.go). Each name is also the action the key needs.
	OpListRoles             = "listRoles"
	OpListUsers             = "listUsers"
	OpGetResourcePolicy     = "getResourcePolicy"
	OpSetResourceRoles      = "setResourceRoles"
	OpSetResourceUsers      = "setResourceUsers"
	OpSetResourcePassword   = "setResourcePassword"
	OpSetResourcePincode    = "setResourcePincode"
	OpSetResourceHeaderAuth = "setResourceHeaderAuth"
	OpSetResourceWhitelist  = "setResourceWhitelist"
	OpCreateResourceRule    = "createResourceRule"
	OpUpdateResourceRule    = "updateResourceRule"
	OpDeleteResourceRule    = "deleteResourceRule"
)

// Operations returns every operation name, so that metrics can be initialised up front.
func Operations() []string {
	return []string{
		OpListDomains, OpListSites, OpGetSite,
		OpListResources, OpGetResource, OpCreateResource, OpUpdateResource, OpDeleteResource,
		OpListTargets, OpGetTarget, OpCreateTarget, OpUpdateTarget, OpDeleteTarget,
		OpListRoles, OpListUsers, OpGetResourcePolicy,
		OpSetResourceRoles, OpSetResourceUsers,
		OpSetResourcePassword, OpSetResourcePincode, OpSetResourceHeaderAuth,
		OpSetResourceWhitelist,
		OpCreateResourceRule, OpUpdateResourceRule, OpDeleteResourceRule,
	}
}

// Config configures a Client. Printing it (fmt, encoding/json, log/slog) never shows
// the API key.
type Config struct {
	// BaseURL is the Integration API root including its /v1 prefix, e.g. http://host:3003/v1.
	BaseURL string
	// Org is the org id every org-scoped call uses.
	Org string
	// APIKey is the bearer token "<apiKeyId>.<secret>".
	APIKey string
	// HTTPClient, when set, sends the requests. Its own Timeout is left alone; Timeout
	// below applies on top of it.
	HTTPClient *http.Client
	// CAPEM, when set, is the only set of CAs trusted for TLS. It excludes HTTPClient.
	CAPEM []byte
	// Timeout bounds each request (each page of a list). Zero means DefaultTimeout.
	Timeout time.Duration
	// PageSize is the page size of list calls. Zero means DefaultPageSize.
	PageSize int
	// Observe, when set, is called once per HTTP request with the operation, one of the
	// Result constants and the request's duration: the hook for per-operation metrics.
	Observe func(operation, result string, d time.Duration)
}

// String describes the config without its API key.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = redacted
	}
	return fmt.Sprintf("pangolinapi.Config{BaseURL:%q Org:%q APIKey:%s Timeout:%s PageSize:%d CAPEM:%d bytes}",
		c.BaseURL, c.Org, key, c.Timeout, c.PageSize, len(c.CAPEM))
}

// GoString is String, so that %#v cannot show the key either.
func (c Config) GoString() string { return c.String() }

// Format makes every fmt verb, %+v and %#v included, print String.
func (c Config) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// MarshalJSON keeps the key out of loggers that encode values as JSON (zap, logr).
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"baseURL": c.BaseURL, "org": c.Org, "apiKey": redacted, "timeout": c.Timeout.String()})
}

// LogValue keeps the key out of log/slog.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// credential holds the key. The Client keeps it behind a pointer so that printing the
// Client's fields by reflection (fmt on a struct that embeds a Client) shows an address.
type credential struct {
	header string    // "Bearer <id>.<secret>"
	key    *redactor // removes the key's secret in any encoding (redact.go)
}

// newCredential holds token, "<id>.<secret>", and what removes it from any text.
func newCredential(token, secret string) *credential {
	key := newRedactor(nil)
	key.add(secret, minRunKey(secret))
	// The token too, by runs that hold half the secret: the id goes with the secret.
	key.add(token, len([]rune(token))-len([]rune(secret))+minRunKey(secret))
	return &credential{header: "Bearer " + token, key: key}
}

// redact removes the key from text that came from the server or the transport.
func (c *credential) redact(s string) string { return c.key.redact(s) }

// Client calls Pangolin's Integration API. It is safe for concurrent use.
type Client struct {
	baseURL  string
	org      string
	cred     *credential
	http     *http.Client
	timeout  time.Duration
	pageSize int
	observe  func(operation, result string, d time.Duration)
	// refusals tells a value Pangolin answers with a 5xx from an outage (refusal.go).
	refusals *refusals
}

// New checks cfg and returns a Client. It makes no request.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("new pangolin client: base URL must be http(s)://host[:port]/v1")
	}
	if u.User != nil {
		return nil, errors.New("new pangolin client: base URL must not carry credentials")
	}
	if cfg.Org == "" {
		return nil, errors.New("new pangolin client: org is required")
	}
	// A token without '.' makes the real server answer 500, which would look transient
	// and be retried forever: refuse it here.
	id, secret, ok := strings.Cut(cfg.APIKey, ".")
	if !ok || id == "" || secret == "" {
		return nil, errors.New("new pangolin client: API key must have the form <apiKeyId>.<secret>")
	}
	if cfg.HTTPClient != nil && len(cfg.CAPEM) > 0 {
		return nil, errors.New("new pangolin client: set HTTPClient or CAPEM, not both")
	}
	if cfg.Timeout < 0 || cfg.PageSize < 0 {
		return nil, errors.New("new pangolin client: timeout and page size must not be negative")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if len(cfg.CAPEM) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(cfg.CAPEM) {
				return nil, errors.New("new pangolin client: CA bundle holds no PEM certificate")
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		hc = &http.Client{Transport: tr}
	}
	c := &Client{
		baseURL:  strings.TrimRight(u.String(), "/"),
		org:      cfg.Org,
		cred:     newCredential(cfg.APIKey, secret),
		http:     hc,
		timeout:  cfg.Timeout,
		pageSize: cfg.PageSize,
		observe:  cfg.Observe,
		refusals: newRefusals(),
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.pageSize == 0 {
		c.pageSize = DefaultPageSize
	}
	return c, nil
}

// Org is the org the client works in.
func (c *Client) Org() string { return c.org }

// String describes the client without its API key.
func (c *Client) String() string {
	return fmt.Sprintf("pangolinapi.Client{BaseURL:%q Org:%q APIKey:%s}", c.baseURL, c.org, redacted)
}

// GoString is String, so that %#v cannot show the key either.
func (c *Client) GoString() string { return c.String() }

// Format makes every fmt verb print String.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// orgPath is the escaped path of an org-scoped route.
func (c *Client) orgPath(suffix string) string {
	return "/org/" + url.PathEscape(c.org) + suffix
}

// do sends one request and decodes the envelope's data into out (when not nil).
// body is nil exactly for GET and DELETE: PUT and POST always carry a JSON body, since
// without one (and its Content-Type) the real server answers 500.
func (c *Client) do(ctx context.Context, op, method, path string, query url.Values, body, out any) error {
	return c.exchange(ctx, op, method, path, query, body, out, c.cred.redact)
}

// doSecret sends a write whose body carries secrets. Besides the key, the secrets are
// removed, in every encoding (redact.go), from whatever the server or the transport
// says, so that a server (or a proxy) echoing the request body cannot carry them into
// an error, and from there into a log, an event or a status.
func (c *Client) doSecret(ctx context.Context, op, method, path string, body any, secrets ...Secret) error {
	r := newRedactor(c.cred.key)
	for _, x := range secrets {
		r.add(string(x), minRun)
	}
	return c.exchange(ctx, op, method, path, nil, body, nil, r.redact)
}

func (c *Client) exchange(ctx context.Context, op, method, path string, query url.Values, body, out any, redact func(string) string) error {
	if method != http.MethodGet {
		return c.write(ctx, op, method, path, query, body, out, redact)
	}
	return c.observed(ctx, op, method, path, query, body, out, redact)
}

// observed sends one request and tells Config.Observe about it.
func (c *Client) observed(ctx context.Context, op, method, path string, query url.Values, body, out any, redact func(string) string) error {
	start := time.Now()
	result, err := c.send(ctx, op, method, path, query, body, out, redact)
	if c.observe != nil {
		c.observe(op, result, time.Since(start))
	}
	return err
}

func (c *Client) send(ctx context.Context, op, method, path string, query url.Values, body, out any, redact func(string) string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	target := c.baseURL + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return ResultClientError, fmt.Errorf("pangolin %s: encode request: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return ResultClientError, fmt.Errorf("pangolin %s: build request: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", c.cred.header)

	resp, err := c.http.Do(req)
	if err != nil {
		return ResultTransportError, &transportError{op: op, err: err, redact: redact}
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return ResultTransportError, &transportError{op: op, err: fmt.Errorf("read response: %w", err), redact: redact}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		result := ResultClientError
		if resp.StatusCode >= 500 {
			result = ResultServerError
		}
		return result, newAPIError(op, resp.StatusCode, raw, redact)
	}
	if out == nil {
		return ResultSuccess, nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return ResultServerError, fmt.Errorf("pangolin %s: decode response envelope: %w", op, err)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return ResultServerError, fmt.Errorf("pangolin %s: decode response data: %w", op, err)
	}
	return ResultSuccess, nil
}
