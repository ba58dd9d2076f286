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

	// ReasonHostConflict (Warning): an older object, of any source, publishes the host:
	// the oldest claim keeps it, and this object is not served for it.
	ReasonHostConflict = "HostConflict"
	// ReasonHostSettingsConflict (Warning): an older HTTPRoute publishes the host through
	// the same Gateway with other host-wide settings (sso, block-access, domain-name,
	// subdomain), so this route's rules are not merged into the host: merging would serve
	// them, or the older route's, with access control they did not ask for.
	ReasonHostSettingsConflict = "HostSettingsConflict"
	// ReasonHostTakenInPangolin (Warning, direct mode): a Pangolin resource PIC did not
	// create already serves the host; PIC leaves it untouched and publishes no duplicate.
	ReasonHostTakenInPangolin = "HostTakenInPangolin"
	// ReasonPathNotRoutable (Warning, direct mode): Pangolin would give the path's router
	// the name of another path's (it cuts router names at 50 characters), and no
	// equivalent form of the path gets a name of its own: the path is not published,
	// the rest of the host is.
	ReasonPathNotRoutable = "PathNotRoutable"
)

// Condition types PIC writes on the parents of the routes it serves (an HTTPRoute's
// status.parents[].conditions). They are Gateway API's: the core decides them for every
// source that reports parents.
const (
	ConditionAccepted         = "Accepted"
	ConditionResolvedRefs     = "ResolvedRefs"
	ConditionPartiallyInvalid = "PartiallyInvalid"
)
