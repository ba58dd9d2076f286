package pangolinapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// Reads of a resource's access that PIC never makes (it reads the whole state with
// GetResourcePolicy): the tests and the contract suite use them to check, against the
// fake and a real Pangolin, what the writes left. Test code of this package, so that the
// external test package sees them and the binary does not carry them.

// Operation names of the reads below, as Op* in client.go.
const (
	OpListResourceRoles    = "listResourceRoles"
	OpGetResourceWhitelist = "getResourceWhitelist"
	OpListResourceRules    = "listResourceRules"
)

// ListResourceRoles returns the roles that may reach a resource: always the Admin role,
// which cannot be removed, and those set with SetResourceRoles. (There is no users
// counterpart: the server's list of a resource's users is always empty.)
func (c *Client) ListResourceRoles(ctx context.Context, resourceID int) ([]Role, error) {
	var raw json.RawMessage
	if err := c.do(ctx, OpListResourceRoles, http.MethodGet, resourcePath(resourceID, "/roles"), nil, nil, &raw); err != nil {
		return nil, err
	}
	// Either a bare list or {"roles": [...]}: the reference shows the list only.
	var list []roleJSON
	var err error
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		err = json.Unmarshal(t, &list)
	} else {
		var wrapped struct {
			Roles []roleJSON `json:"roles"`
		}
		err = json.Unmarshal(t, &wrapped)
		list = wrapped.Roles
	}
	if err != nil {
		return nil, fmt.Errorf("pangolin %s: decode response data: %w", OpListResourceRoles, err)
	}
	out := make([]Role, len(list))
	for i, r := range list {
		out[i] = r.role()
	}
	return out, nil
}

// GetResourceWhitelist returns a resource's email whitelist, lower case. It is kept, and
// returned, while the whitelist is disabled.
func (c *Client) GetResourceWhitelist(ctx context.Context, resourceID int) ([]string, error) {
	var data struct {
		Whitelist []struct {
			Email string `json:"email"`
		} `json:"whitelist"`
	}
	if err := c.do(ctx, OpGetResourceWhitelist, http.MethodGet, resourcePath(resourceID, "/whitelist"), nil, nil, &data); err != nil {
		return nil, err
	}
	out := make([]string, len(data.Whitelist))
	for i, e := range data.Whitelist {
		out[i] = e.Email
	}
	return out, nil
}

// ListResourceRules returns a resource's rules by ascending priority; the order of equal
// priorities is not defined.
func (c *Client) ListResourceRules(ctx context.Context, resourceID int) ([]Rule, error) {
	path := resourcePath(resourceID, "/rules")
	return listAll(c, true, func(q url.Values) ([]Rule, int, error) {
		var page struct {
			Rules      []ruleJSON `json:"rules"`
			Pagination pagination `json:"pagination"`
		}
		err := c.do(ctx, OpListResourceRules, http.MethodGet, path, q, nil, &page)
		out := make([]Rule, len(page.Rules))
		for i, r := range page.Rules {
			out[i] = r.rule()
		}
		return out, page.Pagination.Total, err
	}, func(r Rule) int { return r.RuleID })
}
