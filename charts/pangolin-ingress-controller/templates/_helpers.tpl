{{/* Chart name. */}}
{{- define "pic.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified name: the release name, prefixed to the chart name unless it holds it. */}}
{{- define "pic.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "pic.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pic.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "pic.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "pic.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "pic.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "pic.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Namespace of the leader-election Lease and of its Role. */}}
{{- define "pic.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/*
The keys of PIC's configuration file that .Values.config may hold: every key of
internal/config/keys.go except tunnels and the leaderElection group, which are top-level
values. internal/manifests tests that this list, values.yaml and keys.go agree.
*/}}
{{- define "pic.configKeys" -}}
defaultTunnel tunnelNamespace onlyListedTunnels tunnelClassMapping backendScheme clusterDomain defaultSSO defaultBlockAccess loadBalancerClass loadBalancerAddress healthChecks sink sources hostPolicy watchNamespaces secretNamespaces resyncPeriod maxConcurrentReconciles kubeconfig kubeAPIQPS kubeAPIBurst metricsBindAddress healthProbeBindAddress pprofBindAddress logLevel logFormat
{{- end }}

{{/*
PIC's configuration file, from .Values.config (null keys left out) and .Values.tunnels;
empty when there is nothing to write. Unknown keys fail the render.
*/}}
{{- define "pic.configFile" -}}
{{- $known := splitList " " (include "pic.configKeys" .) }}
{{- $file := dict }}
{{- range $key, $value := .Values.config | default dict }}
{{- if or (eq $key "tunnels") (eq $key "leaderElection") }}
{{- fail (printf "config.%s: set %s at the top level of the values, not under config" $key $key) }}
{{- end }}
{{- if not (has $key $known) }}
{{- fail (printf "config.%s is not a PIC setting; the keys are: %s" $key (join ", " $known)) }}
{{- end }}
{{- if not (kindIs "invalid" $value) }}
{{- $_ := set $file $key $value }}
{{- end }}
{{- end }}
{{- with .Values.tunnels }}
{{- $_ := set $file "tunnels" . }}
{{- end }}
{{- $pangolin := dict }}
{{- range $key, $value := omit (.Values.pangolin | default dict) "apiKeySecret" "caSecret" }}
{{- if not (has $key (list "url" "org" "ownerId" "caFile" "apiKeyFile" "driftPeriod" "maxConcurrentReads" "newtImage" "newtReplicas" "newtCPURequest" "newtMemoryRequest" "newtCPULimit" "newtMemoryLimit" "newtEndpoint" "newtOwner")) }}
{{- fail (printf "pangolin.%s is not a PIC setting; the keys are: url, org, ownerId, caFile, apiKeyFile, driftPeriod, maxConcurrentReads, newtImage, newtReplicas, newtCPURequest, newtMemoryRequest, newtCPULimit, newtMemoryLimit, newtEndpoint, newtOwner, apiKeySecret, caSecret" $key) }}
{{- end }}
{{- if not (kindIs "invalid" $value) }}
{{- $_ := set $pangolin $key $value }}
{{- end }}
{{- end }}
{{- with (include "pic.pangolinKeyFile" .) }}
{{- $_ := set $pangolin "apiKeyFile" . }}
{{- end }}
{{- with (include "pic.pangolinCAFile" .) }}
{{- $_ := set $pangolin "caFile" . }}
{{- end }}
{{- if and (include "pic.managedSites" .) (not (hasKey $pangolin "newtOwner")) }}
{{- $_ := set $pangolin "newtOwner" (include "pic.fullname" .) }}
{{- end }}
{{- if $pangolin }}
{{- $_ := set $file "pangolin" $pangolin }}
{{- end }}
{{- if $file }}
{{- toYaml $file }}
{{- end }}
{{- end }}

{{/*
The sources PIC runs, comma-separated, each trimmed. Like PIC, --sources in extraArgs
(repeated flags add up) beats PIC_SOURCES in extraEnv, which beats config.sources, whose
default is ingress; a list or a comma-separated string. The opt-in sources' RBAC is
rendered from it (pic.gatewayAPI, pic.service); internal/manifests tests that this agrees
with the configuration PIC loads from the rendered Deployment.
*/}}
{{- define "pic.sources" -}}
{{- $sources := index (.Values.config | default dict) "sources" }}
{{- range .Values.extraEnv }}
{{- if and (eq (toString .name) "PIC_SOURCES") (ne (toString .value) "") }}
{{- $sources = .value }}
{{- end }}
{{- end }}
{{- $flags := list }}
{{- $prev := "" }}
{{- range .Values.extraArgs }}
{{- $arg := toString . }}
{{- if hasPrefix "--sources=" $arg }}
{{- $flags = append $flags (trimPrefix "--sources=" $arg) }}
{{- else if eq $prev "--sources" }}
{{- $flags = append $flags $arg }}
{{- end }}
{{- $prev = $arg }}
{{- end }}
{{- if $flags }}
{{- $sources = join "," $flags }}
{{- end }}
{{- if kindIs "invalid" $sources }}
{{- $sources = "ingress" }}
{{- else if kindIs "slice" $sources }}
{{- $sources = join "," $sources }}
{{- end }}
{{- $list := list }}
{{- range splitList "," (toString $sources) }}
{{- $list = append $list (trim .) }}
{{- end }}
{{- join "," $list }}
{{- end }}

{{/*
"true" when PIC runs a Gateway API source (pic.sources), else "": httproute, tcproute
or udproute.
*/}}
{{- define "pic.gatewayAPI" -}}
{{- $list := splitList "," (include "pic.sources" .) }}
{{- if or (has "httproute" $list) (has "tcproute" $list) (has "udproute" $list) }}true{{ end }}
{{- end }}

{{/*
"true" when PIC runs with the service source (pic.sources), else "": Services of type
LoadBalancer of config.loadBalancerClass, sources/loadbalancer.
*/}}
{{- define "pic.service" -}}
{{- if has "service" (splitList "," (include "pic.sources" .)) }}true{{ end }}
{{- end }}

{{/*
"true" when PIC derives health checks for objects that do not say (the key healthChecks,
default false), else "". Like PIC, --health-checks in extraArgs (the last one; alone it
means true, --health-checks=<bool> otherwise) beats PIC_HEALTH_CHECKS in extraEnv, which
beats config.healthChecks; booleans are read as Go's strconv.ParseBool reads them.
internal/manifests tests that this agrees with the configuration PIC loads.
*/}}
{{- define "pic.healthChecks" -}}
{{- $on := index (.Values.config | default dict) "healthChecks" }}
{{- range .Values.extraEnv }}
{{- if and (eq (toString .name) "PIC_HEALTH_CHECKS") (ne (toString .value) "") }}
{{- $on = .value }}
{{- end }}
{{- end }}
{{- range .Values.extraArgs }}
{{- $arg := toString . }}
{{- if eq $arg "--health-checks" }}
{{- $on = true }}
{{- else if hasPrefix "--health-checks=" $arg }}
{{- $on = trimPrefix "--health-checks=" $arg }}
{{- end }}
{{- end }}
{{- if has (trim (toString $on)) (list "true" "True" "TRUE" "t" "T" "1") }}true{{ end }}
{{- end }}

{{/*
"true" when a rule of config.hostPolicy selects namespaces by labels (a namespaceSelector
that is not blank), else "": PIC then reads namespaces, and the chart grants it
<fullname>-host-policy. hostPolicy is read from the file only, so the values say it all.
internal/manifests tests that this agrees with the configuration PIC loads.
*/}}
{{- define "pic.hostPolicySelectors" -}}
{{- $rules := index (.Values.config | default dict) "hostPolicy" }}
{{- if kindIs "slice" $rules }}
{{- range $rules }}
{{- if and (kindIs "map" .) (ne (trim (toString (index . "namespaceSelector" | default ""))) "") }}true{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
"true" when the chart grants PIC list on pods (<fullname>-health-checks): health checks
are on for every object (pic.healthChecks), or rbac.readPods lets objects ask for them
with the health-check annotation while the default stays off.
*/}}
{{- define "pic.readPods" -}}
{{- if or (include "pic.healthChecks" .) .Values.rbac.readPods }}true{{ end }}
{{- end }}

{{/*
The sink PIC runs: config.sink, default pangolinresource. Like PIC, --sink in extraArgs
(the last one) beats PIC_SINK in extraEnv, which beats config.sink. The pangolinresource
sink's ClusterRoles are rendered only for that sink. internal/manifests tests that this
agrees with the configuration PIC loads from the rendered Deployment.
*/}}
{{- define "pic.sink" -}}
{{- $sink := index (.Values.config | default dict) "sink" }}
{{- range .Values.extraEnv }}
{{- if and (eq (toString .name) "PIC_SINK") (ne (toString .value) "") }}
{{- $sink = .value }}
{{- end }}
{{- end }}
{{- $prev := "" }}
{{- range .Values.extraArgs }}
{{- $arg := toString . }}
{{- if hasPrefix "--sink=" $arg }}
{{- $sink = trimPrefix "--sink=" $arg }}
{{- else if eq $prev "--sink" }}
{{- $sink = $arg }}
{{- end }}
{{- $prev = $arg }}
{{- end }}
{{- if kindIs "invalid" $sink }}pangolinresource{{ else }}{{ trim (toString $sink) }}{{ end }}
{{- end }}

{{/* The port of a bind address such as ":8080" (default when unset), or "" when it is "0". */}}
{{- define "pic.port" -}}
{{- $addr := index . 0 }}
{{- if kindIs "invalid" $addr }}{{ index . 1 }}
{{- else if ne (toString $addr) "0" }}
{{- $port := regexFind "[0-9]+$" (toString $addr) }}
{{- if not $port }}{{ fail (printf "%s: want host:port or :port, or \"0\"" (toString $addr)) }}{{ end }}
{{- $port }}
{{- end }}
{{- end }}

{{- define "pic.metricsPort" -}}
{{- include "pic.port" (list (index (.Values.config | default dict) "metricsBindAddress") "8080") }}
{{- end }}

{{- define "pic.healthPort" -}}
{{- include "pic.port" (list (index (.Values.config | default dict) "healthProbeBindAddress") "8081") }}
{{- end }}

{{/*
The IngressClasses to create, as YAML {classes: [{name, default, tunnel, annotations}]}:
the ingressClasses value, then, with tunnelIngressClasses, pangolin-<alias> for each alias
of tunnels and of config.tunnelClassMapping that ingressClasses does not list already.
*/}}
{{- define "pic.ingressClasses" -}}
{{- $classes := list }}
{{- $names := list }}
{{- range $i, $item := .Values.ingressClasses }}
{{- $class := $item }}
{{- if kindIs "string" $item }}
{{- $class = dict "name" $item }}
{{- end }}
{{- $name := required (printf "ingressClasses[%d].name is required" $i) $class.name }}
{{- $classes = append $classes $class }}
{{- $names = append $names $name }}
{{- end }}
{{- if .Values.tunnelIngressClasses }}
{{- $aliases := keys (.Values.tunnels | default dict) }}
{{- $mapping := index (.Values.config | default dict) "tunnelClassMapping" }}
{{- if not (kindIs "invalid" $mapping) }}
{{- range regexSplit "[,\n]" (toString $mapping) -1 }}
{{- $alias := trim (first (splitList "=" .)) }}
{{- if and $alias (contains "=" .) }}
{{- $aliases = append $aliases $alias }}
{{- end }}
{{- end }}
{{- end }}
{{- range $alias := $aliases | uniq | sortAlpha }}
{{- $name := printf "pangolin-%s" $alias }}
{{- if not (has $name $names) }}
{{- $classes = append $classes (dict "name" $name) }}
{{- $names = append $names $name }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml (dict "classes" $classes) }}
{{- end }}

{{/*
Where the Pangolin API key Secret is mounted, when pangolin.apiKeySecret names one.
*/}}
{{- define "pic.pangolinKeyFile" -}}
{{- with (.Values.pangolin | default dict).apiKeySecret }}
{{- if .name }}/etc/pic-pangolin/{{ .key | default "apiKey" }}{{ end }}
{{- end }}
{{- end }}

{{/*
Where the Pangolin CA bundle Secret is mounted, when pangolin.caSecret names one.
*/}}
{{- define "pic.pangolinCAFile" -}}
{{- with (.Values.pangolin | default dict).caSecret }}
{{- if .name }}/etc/pic-pangolin-ca/{{ .key | default "ca.crt" }}{{ end }}
{{- end }}
{{- end }}

{{/*
"true" when a tunnel of the values is a managed site (docs/direct-mode.md#managed-sites):
config.defaultTunnel or an entry of tunnels written as a mapping with managedSite true.
PIC then creates the site and runs its Newt agent in the release's namespace, which the
Role of templates/managed-sites.yaml lets it do, and owns the agent's objects by its
Deployment (pangolin.newtOwner, the release's fullname unless set).
*/}}
{{- define "pic.managedSites" -}}
{{- $tunnels := values (.Values.tunnels | default dict) }}
{{- with (index (.Values.config | default dict) "defaultTunnel") }}
{{- $tunnels = append $tunnels . }}
{{- end }}
{{- range $tunnels }}
{{- if and (kindIs "map" .) (eq (toString (index . "managedSite")) "true") }}true{{ end }}
{{- end }}
{{- end }}
