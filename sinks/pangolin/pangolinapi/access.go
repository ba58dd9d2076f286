package pangolinapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Access control of a resource: its roles, users, password, PIN code, header auth,
// email whitelist and rules (reference sections 11 and 12). Every call writes the
// resource's inline policy. Read the state back with GetResourcePolicy: it is the only
// read that shows all of it, and the only one that shows users at all.

func resourcePath(id int, suffix string) string { return "/resource/" + strconv.Itoa(id) + suffix }

// ListRoles returns every role of the org, the Admin role included.
func (c *Client) ListRoles(ctx context.Context) ([]Role, error) {
	return listAll(c, false, func(q url.Values) ([]Role, int, error) {
		var page struct {
			Roles      []roleJSON `json:"roles"`
			Pagination pagination `json:"pagination"`
		}
		err := c.do(ctx, OpListRoles, http.MethodGet, c.orgPath("/roles"), q, nil, &page)
		out := make([]Role, len(page.Roles))
		for i, r := range page.Roles {
			out[i] = r.role()
		}
		return out, page.Pagination.Total, err
	}, func(r Role) int { return r.RoleID })
}

// ListUsers returns every user of the org.
func (c *Client) ListUsers(ctx context.Context) ([]User, error) {
	return listAll(c, false, func(q url.Values) ([]User, int, error) {
		var page struct {
			Users      []userJSON `json:"users"`
			Pagination pagination `json:"pagination"`
		}
		err := c.do(ctx, OpListUsers, http.MethodGet, c.orgPath("/users"), q, nil, &page)
		out := make([]User, len(page.Users))
		for i, u := range page.Users {
			out[i] = u.user()
		}
		return out, page.Pagination.Total, err
	}, func(u User) string { return u.UserID })
}

// GetResourcePolicy returns a resource's whole access state.
func (c *Client) GetResourcePolicy(ctx context.Context, resourceID int) (ResourcePolicy, error) {
	var p policiesJSON
	if err := c.do(ctx, OpGetResourcePolicy, http.MethodGet, resourcePath(resourceID, "/policies"), nil, nil, &p); err != nil {
		return ResourcePolicy{}, err
	}
	out, err := p.policy()
	if err != nil {
		return ResourcePolicy{}, fmt.Errorf("pangolin %s: %w", OpGetResourcePolicy, err)
	}
	return out, nil
}

// SetResourceRoles replaces the roles that may reach a resource besides Admin. The
// Admin role must not be among them (400); an unknown role is 404, and nothing changes.
// Duplicates are refused here: the server would report them as unknown roles.
func (c *Client) SetResourceRoles(ctx context.Context, resourceID int, roleIDs []int) error {
	ids := make([]int, 0, len(roleIDs))
	for _, id := range roleIDs {
		if id <= 0 {
			return fmt.Errorf("set roles of resource %d: role id %d is not a role id", resourceID, id)
		}
		if slices.Contains(ids, id) {
			return fmt.Errorf("set roles of resource %d: role %d is listed twice", resourceID, id)
		}
		ids = append(ids, id)
	}
	body := struct {
		RoleIDs []int `json:"roleIds"`
	}{ids}
	return c.do(ctx, OpSetResourceRoles, http.MethodPost, resourcePath(resourceID, "/roles"), nil, body, nil)
}

// SetResourceUsers replaces the users that may reach a resource. They are user ids
// (User.UserID): the server refuses an email, or an id it does not know, with a 403
// that reads like a permission problem, so an email is refused here.
func (c *Client) SetResourceUsers(ctx context.Context, resourceID int, userIDs []string) error {
	ids := make([]string, 0, len(userIDs))
	for _, id := range userIDs {
		switch {
		case id == "":
			return fmt.Errorf("set users of resource %d: empty user id", resourceID)
		case strings.Contains(id, "@"):
			return fmt.Errorf("set users of resource %d: %q is an email; users are set by user id", resourceID, id)
		case slices.Contains(ids, id):
			return fmt.Errorf("set users of resource %d: user %q is listed twice", resourceID, id)
		}
		ids = append(ids, id)
	}
	body := struct {
		UserIDs []string `json:"userIds"`
	}{ids}
	return c.do(ctx, OpSetResourceUsers, http.MethodPost, resourcePath(resourceID, "/users"), nil, body, nil)
}

// SetResourcePassword sets a resource's password (4 to 100 characters). Every call
// creates a new password row with a new id, even with the same password, and logs out
// every visitor who used the old one: call it only when the password changed.
func (c *Client) SetResourcePassword(ctx context.Context, resourceID int, password Secret) error {
	if password == "" {
		return fmt.Errorf("set password of resource %d: empty password (RemoveResourcePassword removes it)", resourceID)
	}
	body := struct {
		Password string `json:"password"`
	}{string(password)}
	return c.doSecret(ctx, OpSetResourcePassword, http.MethodPost, resourcePath(resourceID, "/password"), body, password)
}

// RemoveResourcePassword removes a resource's password.
func (c *Client) RemoveResourcePassword(ctx context.Context, resourceID int) error {
	body := struct {
		Password *string `json:"password"`
	}{}
	return c.do(ctx, OpSetResourcePassword, http.MethodPost, resourcePath(resourceID, "/password"), nil, body, nil)
}

func sixDigits(s Secret) bool {
	if len(s) != 6 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// SetResourcePincode sets a resource's PIN code, exactly 6 digits. Like a password, every
// call mints a new id and logs the code's visitors out.
func (c *Client) SetResourcePincode(ctx context.Context, resourceID int, pincode Secret) error {
	if !sixDigits(pincode) {
		return fmt.Errorf("set PIN code of resource %d: a PIN code is exactly 6 digits", resourceID)
	}
	body := struct {
		Pincode string `json:"pincode"`
	}{string(pincode)}
	return c.doSecret(ctx, OpSetResourcePincode, http.MethodPost, resourcePath(resourceID, "/pincode"), body, pincode)
}

// RemoveResourcePincode removes a resource's PIN code.
func (c *Client) RemoveResourcePincode(ctx context.Context, resourceID int) error {
	body := struct {
		Pincode *string `json:"pincode"`
	}{}
	return c.do(ctx, OpSetResourcePincode, http.MethodPost, resourcePath(resourceID, "/pincode"), nil, body, nil)
}

// SetResourceHeaderAuth sets a resource's header (basic) authentication. Every call mints
// a new id, even with the same credentials.
func (c *Client) SetResourceHeaderAuth(ctx context.Context, resourceID int, h HeaderAuth) error {
	if h.User == "" || h.Password == "" {
		return fmt.Errorf("set header auth of resource %d: user and password are required (RemoveResourceHeaderAuth removes it)", resourceID)
	}
	body := struct {
		User                  string `json:"user"`
		Password              string `json:"password"`
		ExtendedCompatibility bool   `json:"extendedCompatibility"`
	}{string(h.User), string(h.Password), h.ExtendedCompatibility}
	return c.doSecret(ctx, OpSetResourceHeaderAuth, http.MethodPost, resourcePath(resourceID, "/header-auth"), body, h.User, h.Password, basicCredentials(h))
}

// basicCredentials is h as a basic-auth header carries it, "user:password" (base64 in the
// header): an echo of that form is as much a secret as either half.
func basicCredentials(h HeaderAuth) Secret { return h.User + ":" + h.Password }

// RemoveResourceHeaderAuth removes a resource's header authentication.
func (c *Client) RemoveResourceHeaderAuth(ctx context.Context, resourceID int) error {
	body := struct {
		User                  *string `json:"user"`
		Password              *string `json:"password"`
		ExtendedCompatibility *bool   `json:"extendedCompatibility"`
	}{}
	return c.do(ctx, OpSetResourceHeaderAuth, http.MethodPost, resourcePath(resourceID, "/header-auth"), nil, body, nil)
}

// SetResourceWhitelist replaces a resource's email whitelist: addresses, or "*@domain"
// for a whole domain (the wildcard only as the whole local part). The server stores them
// lower case. It refuses the call, even with no emails, while the resource's
// EmailWhitelistEnabled is off (UpdateResource turns it on); turning it off keeps the
// list, so empty it first if "off" must mean "empty".
func (c *Client) SetResourceWhitelist(ctx context.Context, resourceID int, emails []string) error {
	body := struct {
		Emails []string `json:"emails"`
	}{append([]string{}, emails...)}
	return c.do(ctx, OpSetResourceWhitelist, http.MethodPost, resourcePath(resourceID, "/whitelist"), nil, body, nil)
}

func (s RuleSpec) check() error {
	var errs []error
	if !slices.Contains([]string{RuleAccept, RuleDrop, RulePass}, s.Action) {
		errs = append(errs, fmt.Errorf("action %q is not ACCEPT, DROP or PASS", s.Action))
	}
	matches := []string{RuleMatchCIDR, RuleMatchIP, RuleMatchPath, RuleMatchCountry, RuleMatchCountryIsNot, RuleMatchASN, RuleMatchRegion}
	if !slices.Contains(matches, s.Match) {
		errs = append(errs, fmt.Errorf("match %q is not one of %s", s.Match, strings.Join(matches, ", ")))
	}
	if s.Value == "" {
		errs = append(errs, errors.New("value is required"))
	}
	return errors.Join(errs...)
}

type ruleBody struct {
	Action   string `json:"action"`
	Match    string `json:"match"`
	Value    string `json:"value"`
	Priority int    `json:"priority"`
	Enabled  bool   `json:"enabled"`
}

// CreateResourceRule adds a rule to a resource. Rules apply only while the resource's
// ApplyRules is on (UpdateResource); an ACCEPT rule then lets what it matches in without
// any authentication.
func (c *Client) CreateResourceRule(ctx context.Context, resourceID int, s RuleSpec) (Rule, error) {
	if err := s.check(); err != nil {
		return Rule{}, fmt.Errorf("create rule on resource %d: %w", resourceID, err)
	}
	var r ruleJSON
	err := c.do(ctx, OpCreateResourceRule, http.MethodPut, resourcePath(resourceID, "/rule"), nil,
		ruleBody(s), &r)
	return r.rule(), err
}

// UpdateResourceRule rewrites a rule in place with every field of s. The server needs
// the priority on every update, and checks a value only when one is sent: sending them
// all keeps a changed match from leaving an unchecked value behind.
func (c *Client) UpdateResourceRule(ctx context.Context, resourceID, ruleID int, s RuleSpec) (Rule, error) {
	if err := s.check(); err != nil {
		return Rule{}, fmt.Errorf("update rule %d of resource %d: %w", ruleID, resourceID, err)
	}
	var r ruleJSON
	err := c.do(ctx, OpUpdateResourceRule, http.MethodPost, resourcePath(resourceID, "/rule/"+strconv.Itoa(ruleID)), nil,
		ruleBody(s), &r)
	return r.rule(), err
}

// DeleteResourceRule deletes a rule of a resource.
func (c *Client) DeleteResourceRule(ctx context.Context, resourceID, ruleID int) error {
	return c.do(ctx, OpDeleteResourceRule, http.MethodDelete, resourcePath(resourceID, "/rule/"+strconv.Itoa(ruleID)), nil, nil, nil)
}
