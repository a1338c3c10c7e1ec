{{/* The resources' name: the release's, or release-chart when the release does not say certwright. */}}
{{- define "certwright.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "certwright.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "certwright.labels" -}}
{{ include "certwright.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: certwright
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "certwright.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The pod template of the StatefulSet (embedded database) and of the Deployment (external). */}}
{{- define "certwright.pod" -}}
metadata:
  labels:
    {{- include "certwright.selectorLabels" . | nindent 4 }}
  annotations:
    checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
spec:
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  # Longer than SVC_SHUTDOWN_TIMEOUT (10s): in-flight requests drain before the kill.
  terminationGracePeriodSeconds: 30
  containers:
    - name: certwright
      image: {{ include "certwright.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      ports:
        - name: https
          containerPort: 8443
          protocol: TCP
      envFrom:
        - configMapRef:
            name: {{ include "certwright.fullname" . }}
      env:
        - name: SVC_PORT
          value: "8443"
        - name: SVC_BIND_ADDRESS
          value: "0.0.0.0"
        - name: SVC_TLS_CERT_PATH
          value: /etc/certwright/tls/tls.crt
        - name: SVC_TLS_KEY_PATH
          value: /etc/certwright/tls/tls.key
        - name: SVC_DATA_DIR
          value: /var/lib/certwright
        - name: SVC_AUTH_TYPE
          value: {{ .Values.auth.type | quote }}
        {{- if eq .Values.auth.type "api-key" }}
        - name: SVC_AUTH_SECRET
          valueFrom:
            secretKeyRef:
              name: {{ .Values.auth.existingSecret }}
              key: {{ .Values.auth.key }}
        {{- end }}
        - name: SVC_ENCRYPTION_KEY
          valueFrom:
            secretKeyRef:
              name: {{ .Values.encryption.existingSecret }}
              key: {{ .Values.encryption.key }}
        {{- if .Values.encryption.previousKey }}
        - name: SVC_ENCRYPTION_KEY_PREVIOUS
          valueFrom:
            secretKeyRef:
              name: {{ .Values.encryption.existingSecret }}
              key: {{ .Values.encryption.previousKey }}
        {{- end }}
        {{- if ne .Values.database.type "embedded" }}
        - name: SVC_DATABASE_URL
          valueFrom:
            secretKeyRef:
              name: {{ .Values.database.existingSecret }}
              key: {{ .Values.database.key }}
        {{- end }}
        {{- if .Values.redis.enabled }}
        - name: SVC_REDIS_URL
          valueFrom:
            secretKeyRef:
              name: {{ .Values.redis.existingSecret }}
              key: {{ .Values.redis.key }}
        {{- end }}
        {{- if .Values.backup.enabled }}
        - name: SVC_BACKUP_DIR
          value: /var/lib/certwright-backups
        - name: SVC_BACKUP_INTERVAL
          value: {{ .Values.backup.interval | quote }}
        - name: SVC_BACKUP_KEEP
          value: {{ .Values.backup.keep | quote }}
        {{- end }}
      startupProbe:
        httpGet:
          path: /health
          port: https
          scheme: HTTPS
        periodSeconds: 5
        failureThreshold: 60
      livenessProbe:
        httpGet:
          path: /health
          port: https
          scheme: HTTPS
        periodSeconds: 10
        timeoutSeconds: 3
        failureThreshold: 3
      readinessProbe:
        httpGet:
          path: /ready
          port: https
          scheme: HTTPS
        periodSeconds: 5
        timeoutSeconds: 3
        failureThreshold: 2
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: ["ALL"]
      volumeMounts:
        - name: tls
          mountPath: /etc/certwright/tls
          readOnly: true
        - name: data
          mountPath: /var/lib/certwright
        - name: tmp
          mountPath: /tmp
        {{- if .Values.backup.enabled }}
        - name: backups
          mountPath: /var/lib/certwright-backups
        {{- end }}
  volumes:
    - name: tls
      secret:
        secretName: {{ .Values.tls.secretName }}
    - name: tmp
      emptyDir: {}
    {{- if ne .Values.database.type "embedded" }}
    # With an external database the data directory holds nothing that must survive the pod.
    - name: data
      emptyDir: {}
    {{- end }}
    {{- if .Values.backup.enabled }}
    - name: backups
      persistentVolumeClaim:
        claimName: {{ include "certwright.fullname" . }}-backups
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
