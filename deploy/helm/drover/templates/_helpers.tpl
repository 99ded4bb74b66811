{{/* Names. */}}
{{- define "drover.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "drover.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "drover.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "drover.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "drover.controllerSelector" -}}
app.kubernetes.io/name: {{ include "drover.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "drover.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "drover.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "drover.secretName" -}}
{{- default (printf "%s-secrets" (include "drover.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* The cluster-scoped ClusterRole(Binding) carries the namespace: releases in two namespaces
     may share a name. */}}
{{- define "drover.clusterRoleName" -}}
{{- printf "drover:%s:%s:nodes" .Release.Namespace (include "drover.fullname" .) -}}
{{- end -}}

{{/* image REPO TAG: registry prefix and the default tag. */}}
{{- define "drover.image" -}}
{{- $root := index . 0 -}}{{- $img := index . 1 -}}
{{- $tag := default (default $root.Chart.AppVersion $root.Values.image.tag) $img.tag -}}
{{- if $root.Values.image.registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $root.Values.image.registry) $img.repository $tag -}}
{{- else -}}
{{- printf "%s:%s" $img.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* Where agents and commands reach the controller. */}}
{{- define "drover.controllerAddress" -}}
{{- printf "%s.%s.svc:%v" (include "drover.fullname" .) .Release.Namespace .Values.service.ports.slurmctld -}}
{{- end -}}
