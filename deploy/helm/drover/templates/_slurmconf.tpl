{{/* slurm.conf: the chart's keys, each replaced by the same key in slurmConf.settings (which
     may add any other), one line per key; then the partitions and the verbatim extra lines. */}}
{{- define "drover.slurmConf" -}}
{{- $chart := dict
      "ClusterName" .Values.slurmConf.clusterName
      "SlurmctldHost" (printf "%s-0(0.0.0.0)" (include "drover.fullname" .))
      "SlurmctldPort" .Values.service.ports.slurmctld
      "SlurmUser" "drover"
      "DroverHttpAddress" "0.0.0.0"
      "DroverHttpPort" .Values.service.ports.http
      "DroverMetricsTokenFile" "/var/lib/drover/metrics-token"
      "DroverK8sNamespace" .Release.Namespace
      "MaxNodeCount" .Values.slurmConf.maxNodeCount }}
{{- $conf := merge (deepCopy (default (dict) .Values.slurmConf.settings)) $chart -}}
# Written by the drover Helm chart (release {{ .Release.Name }}); change the values, not this file.
# droverctld listens on every address of its pod (SlurmctldHost's address); agents and commands
# come through the Service. DroverK8sNamespace: the operator manages the NodeSets of the
# release's namespace only.
{{- range $k, $v := $conf }}
{{ $k }}={{ $v }}
{{- end }}
{{- range .Values.slurmConf.partitions }}
PartitionName={{ .name }} Nodes={{ default "ALL" .nodes }}{{ if .default }} Default=YES{{ end }}{{ with .maxTime }} MaxTime={{ . }}{{ end }}{{ with .extra }} {{ . }}{{ end }} State=UP
{{- end }}
{{- with .Values.slurmConf.extra }}
{{ . }}
{{- end }}
{{- end -}}
