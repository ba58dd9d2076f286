// Package pic is PIC's public vocabulary: the annotations users write, the labels PIC
// puts on what it creates, and the event reasons users see. Every such string lives
// here, once, so that the references in docs/ can be checked against one file
// (internal/docs).
package pic

// ControllerName is the spec.controller of IngressClasses PIC serves.
const ControllerName = "pangolin.io/ingress-controller"

// GatewayControllerName is the spec.controllerName of GatewayClasses PIC serves.
const GatewayControllerName = "pangolin.io/gateway-controller"

// DefaultClassName is the class for the default tunnel; "pangolin-<alias>" selects a tunnel.
const (
	DefaultClassName = "pangolin"
	ClassPrefix      = "pangolin-"
)

// Annotations users put on an Ingress (and on an HTTPRoute where they make sense).
const (
	AnnotationPrefix        = "pangolin.ingress.k8s.io/"
	AnnotationEnabled       = AnnotationPrefix + "enabled"
	AnnotationTunnelName    = AnnotationPrefix + "tunnel-name"
	AnnotationDomainName    = AnnotationPrefix + "domain-name"
	AnnotationSubdomain     = AnnotationPrefix + "subdomain"
	AnnotationBackendScheme = AnnotationPrefix + "backend-scheme"
	AnnotationSSO           = AnnotationPrefix + "sso"
	AnnotationBlockAccess   = AnnotationPrefix + "block-access"
	// AnnotationHealthCheck ("true" or "false") asks for, or declines, health checks of
	// the object's backends, whatever the configuration's healthChecks says;
	// AnnotationHealthCheckPath gives an explicit HTTP path to check instead of the
	// pods' readiness probe (and asks for health checks).
	AnnotationHealthCheck     = AnnotationPrefix + "health-check"
	AnnotationHealthCheckPath = AnnotationPrefix + "health-check-path"
	// AnnotationPublicPorts, on a Service PIC publishes as TCP/UDP ports, gives a port
	// another public port than its own: "<port name or number>=<public port>", comma-separated.
	AnnotationPublicPorts = AnnotationPrefix + "public-ports"
	// AnnotationRequireAccessPolicy, on an Ingress or an HTTPRoute, names the
	// AccessPolicy (in the object's namespace) the object must be published with: until
	// it exists, targets the object and applies to it, nothing new is published for the
	// object and what it published stays as it is.
	AnnotationRequireAccessPolicy = AnnotationPrefix + "require-access-policy"

	// LegacyClassAnnotation is the pre-IngressClass way of choosing a controller.
	LegacyClassAnnotation = "kubernetes.io/ingress.class"
)

// Labels and annotations PIC writes on the PangolinResources it owns.
const (
	LabelOwnerUID       = "pic.ingress.k8s.io/uid"
	LabelOwnerName      = "pic.ingress.k8s.io/name"
	LabelOwnerNamespace = "pic.ingress.k8s.io/namespace"
	// LabelOwnerKind is written for sources other than Ingress, whose names may collide with an Ingress's.
	LabelOwnerKind = "pic.ingress.k8s.io/kind"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "pangolin-ingress-controller"
	// AnnotationHost records the source host a resource serves (the public name may differ through overrides).
	AnnotationHost = "pic.ingress.k8s.io/host"
)

// Event reasons. Normal events say what PIC did; Warning events say why it did not.
const (
	ReasonCreated = "Created"
	ReasonUpdated = "Updated"
	ReasonDeleted = "Deleted"
	// ReasonTunnelNotReady (Normal): the tunnel exists but the operator does not report it Ready yet.
	ReasonTunnelNotReady = "TunnelNotReady"
	// ReasonExposed (Normal): the operator reports the resource Ready; the event carries the URL.
	ReasonExposed = "Exposed"
	// ReasonPangolinError (Warning): the operator reports an error for the resource, or,
	// in direct mode, Pangolin refused a request (its status and message are given).
	ReasonPangolinError = "PangolinError"
	// ReasonSinkUnavailable (Warning): what PIC publishes into cannot be read or written
	// (Pangolin in direct mode, the API server's PangolinResources otherwise); the
	// reconcile is retried with backoff, and nothing is removed meanwhile.
	ReasonSinkUnavailable = "SinkUnavailable"
	// ReasonTLSIgnored (Normal): the Ingress has spec.tls, which Pangolin does not use: it
	// serves the host with its own certificates.
	ReasonTLSIgnored = "TLSIgnored"

	ReasonNoRules                    = "NoRules"
	ReasonEmptyHost                  = "EmptyHost"
	ReasonInvalidHost                = "InvalidHost"
	ReasonWildcardHost               = "WildcardHost"
	ReasonIPAddressHost              = "IPAddressHost"
	ReasonLocalhostHost              = "LocalhostHost"
	ReasonSingleLabelHost            = "SingleLabelHost"
	ReasonClusterInternalHost        = "ClusterInternalHost"
	ReasonApexHost                   = "ApexHost"
	ReasonDomainNotFound             = "DomainNotFound"
	ReasonOverrideConflict           = "OverrideConflict"
	ReasonInvalidAnnotation          = "InvalidAnnotation"
	ReasonTunnelNotFound             = "TunnelNotFound"
	ReasonTunnelNamespaceUnsupported = "TunnelNamespaceUnsupported"
	ReasonServiceNotFound            = "ServiceNotFound"
	ReasonServicePortNotFound        = "ServicePortNotFound"
	ReasonResourceBackendUnsupported = "ResourceBackendUnsupported"
	ReasonNoBackend                  = "NoBackend"
	ReasonDuplicatePath              = "DuplicatePath"
	ReasonPathRoutingUnsupported     = "PathRoutingUnsupported"
	ReasonNameConflict               = "NameConflict"
	ReasonAccessControlUnsupported   = "AccessControlUnsupported"
	ReasonTunnelNotAllowed           = "TunnelNotAllowed"

	// ReasonHostNotAllowed (Warning): the configuration's hostPolicy does not let the
	// object's namespace publish the host (after its overrides): it is not published, and
	// what was published for it is removed.
	ReasonHostNotAllowed = "HostNotAllowed"
	// ReasonPortNotAllowed (Warning): the configuration's hostPolicy lists ports, and
	// none of the rules that select the object's namespace lists this public TCP or UDP
	// port: it is not published, and what was published on it is removed.
	ReasonPortNotAllowed = "PortNotAllowed"
	// ReasonHostConflict (Warning): an older object, of any source, publishes the host:
	// the oldest claim keeps it, and this object is not served for it.
	ReasonHostConflict = "HostConflict"
	// ReasonHostSettingsConflict (Warning): an older HTTPRoute publishes the host through
	// the same Gateway with other host-wide settings (sso, block-access, domain-name,
	// subdomain), so this route's rules are not merged into the host: merging would serve
	// them, or the older route's, with access control they did not ask for.
	ReasonHostSettingsConflict = "HostSettingsConflict"
	// ReasonHostTakenInPangolin (Warning, direct mode): a Pangolin resource PIC did not
	// create already serves the host, or the public TCP or UDP port; PIC leaves it
	// untouched and publishes no duplicate.
	ReasonHostTakenInPangolin = "HostTakenInPangolin"
	// ReasonReplacementRefused (Warning): a host or public port the object moves to was
	// refused (the Warning of its own names why), so the resource it replaces is kept
	// exactly as it is, and deleted only once its replacement is published.
	ReasonReplacementRefused = "ReplacementRefused"

	// ReasonAccessPolicyAttached (Normal): the host is protected by the named
	// AccessPolicy (on the object itself, or on its Gateway).
	ReasonAccessPolicyAttached = "AccessPolicyAttached"
	// ReasonAccessPolicyInvalid (Warning): the attached AccessPolicy, or a value read
	// from its Secrets, is invalid (a rule value, an email pattern, a PIN that is not 6
	// digits, a password of the wrong length...). It fails closed: a host not yet
	// published is not published, one already published keeps what Pangolin holds.
	ReasonAccessPolicyInvalid = "AccessPolicyInvalid"
	// ReasonAccessPolicySecretNotFound (Warning): a Secret, or a key of it, that the
	// attached AccessPolicy references does not exist; fails closed as
	// AccessPolicyInvalid, and is retried.
	ReasonAccessPolicySecretNotFound = "AccessPolicySecretNotFound"
	// ReasonAccessPolicySecretForbidden (Warning): the attached AccessPolicy references
	// Secrets in a namespace where PIC may not read Secrets (the configuration's
	// secretNamespaces leaves it out); fails closed as AccessPolicyInvalid.
	ReasonAccessPolicySecretForbidden = "AccessPolicySecretForbidden"
	// ReasonAccessPolicyConflicted (Warning, on an AccessPolicy): an older policy targets
	// the same object and applies there instead; the event names it.
	ReasonAccessPolicyConflicted = "AccessPolicyConflicted"
	// ReasonAccessPolicyUnsupported (Warning): the attached AccessPolicy asks for more
	// than sso and blockAccess, which only the direct mode (sink: pangolin) can carry;
	// with the PangolinResource sink the host is not published rather than published
	// with less protection than asked.
	ReasonAccessPolicyUnsupported = "AccessPolicyUnsupported"
	// ReasonAccessPolicyNotApplied (Warning, direct mode): the attached AccessPolicy
	// cannot be applied whole: a role, user or identity provider it names that Pangolin
	// does not know (PIC never creates them), or Pangolin refusing part of it. It fails
	// closed: a host not yet published is not published, one already published keeps
	// what Pangolin holds and nothing that would open it is written.
	ReasonAccessPolicyNotApplied = "AccessPolicyNotApplied"
	// ReasonAccessPolicyRequired (Warning): the object names the AccessPolicy it requires
	// (the require-access-policy annotation), and that policy does not exist, does not
	// target the object, or is not the one that applies to it (an older one does).
	// Nothing new is published for the object, and what it published stays as it is.
	ReasonAccessPolicyRequired = "AccessPolicyRequired"
	// ReasonAccessPolicyPending (Warning): a host about to be published for the first
	// time is targeted, on the API server, by an AccessPolicy (on the object or on its
	// Gateway) that PIC's cache has not received yet: the host waits for it, and is
	// retried, rather than being published without it.
	ReasonAccessPolicyPending = "AccessPolicyPending"
	// ReasonAccessPolicyAnnotationConflict (Normal): the sso or block-access annotation
	// and the attached AccessPolicy disagree; the stricter applies, and the event says
	// which.
	ReasonAccessPolicyAnnotationConflict = "AccessPolicyAnnotationConflict"
	// ReasonAccessRuleNeedsGeoIP (Normal): an AccessPolicy rule matches a country,
	// region or ASN, which Pangolin can only evaluate with GeoIP databases; without them
	// CountryIsNot matches every client and the others none.
	ReasonAccessRuleNeedsGeoIP = "AccessRuleNeedsGeoIP"
	// ReasonAccessRecordInvalid (Warning, direct mode, on a ConfigMap of PIC's access
	// record): entries of the record fail verification (forged, edited by hand, or
	// written with another API key) and are ignored: nothing is stripped from a resource
	// no valid entry governs.
	ReasonAccessRecordInvalid = "AccessRecordInvalid"
	// ReasonPathNotRoutable (Warning, direct mode): Pangolin would give the path's router
	// the name of another path's (it cuts router names at 50 characters), and no
	// equivalent form of the path gets a name of its own: the path is not published,
	// the rest of the host is.
	ReasonPathNotRoutable = "PathNotRoutable"
	// ReasonFilterUnsupported (Warning): a path rewrite or request headers (HTTPRoute
	// URLRewrite, RequestHeaderModifier) that the sink cannot carry: the PangolinResource
	// CRD has neither, and a rewrite must suit Pangolin's. It fails closed: the host is
	// not published rather than published without them.
	ReasonFilterUnsupported = "FilterUnsupported"
	// ReasonPortConflict (Warning): an older object, of any source, publishes the same
	// public TCP or UDP port: this one is not served on it.
	ReasonPortConflict = "PortConflict"
	// ReasonHealthCheckUnsupported (Warning): health checks asked for a backend through a
	// sink that cannot carry them (the PangolinResource CRD), or one Pangolin would
	// refuse (the direct sink): the host or port is published without them.
	ReasonHealthCheckUnsupported = "HealthCheckUnsupported"
	// ReasonNoReadinessProbe (Normal): a health check was asked for a backend whose pods
	// have no readiness probe PIC can turn into one (no probe, an exec or gRPC probe, a
	// port the Service does not expose): the backend is published without a check.
	ReasonNoReadinessProbe = "NoReadinessProbe"
	// ReasonPortProtocolUnsupported (Warning): a Service port of a protocol Pangolin
	// cannot publish (SCTP): the Service's other ports are published.
	ReasonPortProtocolUnsupported = "PortProtocolUnsupported"
	// ReasonRawResourceUnsupported (Warning): a TCP or UDP port that the sink cannot
	// carry (a PangolinResource CRD without proxyConfig).
	ReasonRawResourceUnsupported = "RawResourceUnsupported"
)

// Condition types PIC writes on the parents of the routes it serves (an HTTPRoute's
// status.parents[].conditions). They are Gateway API's: the core decides them for every
// source that reports parents.
const (
	ConditionAccepted         = "Accepted"
	ConditionResolvedRefs     = "ResolvedRefs"
	ConditionPartiallyInvalid = "PartiallyInvalid"
)

// PolicyReasonResolvedRefs is the reason of an AccessPolicy's ResolvedRefs=True
// condition: every Secret and key it references exists. (ResolvedRefs=False has the
// reason AccessPolicySecretNotFound; the Accepted reasons are GEP-713's.)
const PolicyReasonResolvedRefs = "ResolvedRefs"

// PolicyReasonOverridden is the reason of an AccessPolicy's Accepted=False condition
// for an HTTPRoute whose Gateway has a policy in mode Override: the Gateway's applies
// to the route instead. GEP-713 names no reason for it.
const PolicyReasonOverridden = "Overridden"
