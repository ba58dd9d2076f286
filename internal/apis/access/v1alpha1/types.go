package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Kinds and groups an AccessPolicy can target.
const (
	GroupIngress   = "networking.k8s.io"
	GroupGateway   = "gateway.networking.k8s.io"
	KindIngress    = "Ingress"
	KindHTTPRoute  = "HTTPRoute"
	KindGateway    = "Gateway"
	KindPolicy     = "AccessPolicy"
	ResourcePlural = "accesspolicies"
)

// AccessPolicy says who may reach the hosts published for the objects it targets: SSO
// roles and users, an email whitelist, a password, a PIN code, header authentication
// and ordered allow/deny rules, in the terms Pangolin enforces them. A policy on an
// HTTPRoute wins over one on its Gateway, unless the Gateway's is an override (Mode);
// of two policies on one object, the oldest applies. Anything invalid or unresolvable
// fails closed: the host is not published, or keeps what Pangolin already holds; it is
// never opened up.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=accesspolicies,singular=accesspolicy,scope=Namespaced,categories=pangolin
// +kubebuilder:metadata:labels="gateway.networking.k8s.io/policy=Inherited"
// +kubebuilder:printcolumn:name="SSO",type=boolean,JSONPath=`.spec.sso`
// +kubebuilder:printcolumn:name="Block",type=boolean,JSONPath=`.spec.blockAccess`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AccessPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AccessPolicySpec `json:"spec"`
	// +optional
	Status AccessPolicyStatus `json:"status,omitempty"`
}

// AccessPolicySpec is the access a policy grants, and to what.
type AccessPolicySpec struct {
	// TargetRefs are the objects this policy protects, in the policy's namespace: an
	// Ingress (group networking.k8s.io), an HTTPRoute or a Gateway (group
	// gateway.networking.k8s.io). A policy on a Gateway applies to every HTTPRoute PIC
	// publishes through it that has no policy of its own, or to every one in mode
	// Override.
	//
	// +required
	// +listType=map
	// +listMapKey=group
	// +listMapKey=kind
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(r, (r.group == 'networking.k8s.io' && r.kind == 'Ingress') || (r.group == 'gateway.networking.k8s.io' && (r.kind == 'HTTPRoute' || r.kind == 'Gateway')))",message="targetRefs may name an Ingress (group networking.k8s.io), an HTTPRoute or a Gateway (group gateway.networking.k8s.io)"
	TargetRefs []gatewayv1.LocalPolicyTargetReference `json:"targetRefs"`

	// Mode says what the policy's settings are to the routes under a Gateway it
	// targets, in GEP-713's terms: Default (when unset), defaults that an HTTPRoute's
	// own policy replaces; Override, overrides that apply to every route PIC publishes
	// through the Gateway, whose own policies are then not accepted (Accepted=False,
	// reason Overridden). Nothing is below an Ingress or an HTTPRoute: on those, both
	// modes mean the same.
	// +optional
	Mode PolicyMode `json:"mode,omitempty"`

	// SSO turns Pangolin's SSO login on or off for the hosts. Unset, it is on when
	// roles, users or autoLoginIdp are given, and otherwise the
	// pangolin.ingress.k8s.io/sso annotation or PIC's default decides. Where the
	// annotation and the policy disagree, the stricter (on) applies.
	// +optional
	SSO *bool `json:"sso,omitempty"`

	// BlockAccess denies every request, whatever else is set. Where the
	// pangolin.ingress.k8s.io/block-access annotation and the policy disagree, the
	// stricter (blocked) applies.
	// +optional
	BlockAccess *bool `json:"blockAccess,omitempty"`

	// Roles are the names of the Pangolin organization's roles whose members may log in
	// (SSO). The Admin role always may, and needs no entry. PIC never creates a role: an
	// unknown name leaves the host unpublished, or as Pangolin holds it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	Roles []string `json:"roles,omitempty"`

	// Users are the organization's users who may log in (SSO), by email or username.
	// PIC never creates a user: one Pangolin does not know leaves the host unpublished,
	// or as Pangolin holds it.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	Users []string `json:"users,omitempty"`

	// AutoLoginIdP sends visitors straight to this identity provider instead of
	// Pangolin's login page: its name, or its numeric id (Pangolin's skipToIdpId).
	// +optional
	// +kubebuilder:validation:MaxLength=255
	AutoLoginIdP string `json:"autoLoginIdp,omitempty"`

	// EmailWhitelist lets visitors in with a one-time code sent to an address that
	// matches one of these: an address (alice@example.com), or a whole domain
	// (*@example.com; the wildcard may only be the whole part before the @). Addresses
	// are compared in lower case.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=3
	// +kubebuilder:validation:items:MaxLength=254
	EmailWhitelist []string `json:"emailWhitelist,omitempty"`

	// Password lets visitors in with a shared password (4 to 100 characters), read from
	// a key of a Secret in the policy's namespace.
	// +optional
	Password *SecretKeySource `json:"password,omitempty"`

	// PinCode lets visitors in with a PIN code (exactly 6 digits), read from a key of a
	// Secret in the policy's namespace.
	// +optional
	PinCode *SecretKeySource `json:"pinCode,omitempty"`

	// HeaderAuth lets clients in with HTTP basic authentication, user and password (4 to
	// 100 characters each) read from a Secret in the policy's namespace.
	// +optional
	HeaderAuth *HeaderAuth `json:"headerAuth,omitempty"`

	// Rules are evaluated in order before any login, the first match deciding: Allow
	// lets the request in without any authentication, Deny refuses it, Pass goes on to
	// the login methods. A request no rule matches goes on to the login methods too.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Rules []Rule `json:"rules,omitempty"`
}

// PolicyMode is whether a Gateway's policy gives defaults or overrides (GEP-713).
// +kubebuilder:validation:Enum=Default;Override
type PolicyMode string

// Policy modes.
const (
	// ModeDefault: a route's own policy replaces the Gateway's.
	ModeDefault PolicyMode = "Default"
	// ModeOverride: the Gateway's policy applies to its routes whatever their own say.
	ModeOverride PolicyMode = "Override"
)

// SecretKeySource reads one value from a Secret.
type SecretKeySource struct {
	// +required
	SecretRef SecretKeyReference `json:"secretRef"`
}

// SecretKeyReference selects one key of a Secret in the policy's namespace.
type SecretKeyReference struct {
	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// SecretReference names a Secret in the policy's namespace.
type SecretReference struct {
	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// HeaderAuth is HTTP basic authentication with credentials from a Secret. The defaults
// are the keys of a kubernetes.io/basic-auth Secret.
type HeaderAuth struct {
	// +required
	SecretRef SecretReference `json:"secretRef"`
	// UserKey is the Secret's key holding the user name.
	// +optional
	// +kubebuilder:default=username
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	UserKey string `json:"userKey,omitempty"`
	// PasswordKey is the Secret's key holding the password.
	// +optional
	// +kubebuilder:default=password
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	PasswordKey string `json:"passwordKey,omitempty"`
	// ExtendedCompatibility is Pangolin's option of the same name (answer the browser's
	// basic-auth prompt too).
	// +optional
	ExtendedCompatibility bool `json:"extendedCompatibility,omitempty"`
}

// RuleAction is what a matching rule does.
// +kubebuilder:validation:Enum=Allow;Deny;Pass
type RuleAction string

// Rule actions; Pangolin calls them ACCEPT, DROP and PASS.
const (
	// RuleAllow lets the request in without any authentication.
	RuleAllow RuleAction = "Allow"
	// RuleDeny refuses the request.
	RuleDeny RuleAction = "Deny"
	// RulePass goes on to the login methods.
	RulePass RuleAction = "Pass"
)

// RuleMatch is what a rule compares the request with.
// +kubebuilder:validation:Enum=IP;CIDR;Path;Country;CountryIsNot;ASN;Region
type RuleMatch string

// Rule matches; Pangolin calls them IP, CIDR, PATH, COUNTRY, COUNTRY_IS_NOT, ASN and
// REGION.
const (
	MatchIP           RuleMatch = "IP"           // a client address: 10.1.2.3, 2001:db8::1
	MatchCIDR         RuleMatch = "CIDR"         // a client network: 10.0.0.0/8
	MatchPath         RuleMatch = "Path"         // a path glob: /public/*
	MatchCountry      RuleMatch = "Country"      // ISO 3166 code, upper case (DE), or ALL
	MatchCountryIsNot RuleMatch = "CountryIsNot" // every client not in that country
	MatchASN          RuleMatch = "ASN"          // an autonomous system: AS15169
	MatchRegion       RuleMatch = "Region"       // a UN M49 region id: 150 (Europe)
)

// Rule is one access rule. Country, CountryIsNot, Region and ASN need GeoIP databases
// on the Pangolin server: without them, CountryIsNot matches every client and the others
// none.
type Rule struct {
	// +required
	Action RuleAction `json:"action"`
	// +required
	Match RuleMatch `json:"match"`
	// Value is what Match compares with, validated as Pangolin does.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value"`
}

// AccessPolicyStatus is the GEP-713 policy status: one entry per target.
type AccessPolicyStatus struct {
	// Ancestors has one entry per target (the ancestorRef is the target itself), with
	// the conditions Accepted (reasons Accepted, Conflicted, Overridden, Invalid,
	// TargetNotFound) and ResolvedRefs (the referenced Secrets and keys exist).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Ancestors []gatewayv1.PolicyAncestorStatus `json:"ancestors,omitempty"`
}

// AccessPolicyList is a list of AccessPolicies.
// +kubebuilder:object:root=true
type AccessPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AccessPolicy `json:"items"`
}
