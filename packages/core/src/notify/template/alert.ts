/**
 * The alert variables a webhook payload or URL template reads (`{{.Level}}`, `{{.Message}}` …),
 * the interface alert-monitoring webhooks share. docs/notifications/templates.md describes
 * each; the webhook channel fills them from a certificate notification.
 */
export interface AlertTemplateData {
  /** Alert id. */
  ID: string;
  /** Alert level, e.g. `warning` or `critical`. */
  Level: string;
  /** What kind of alert, e.g. `ExpirationWarning`. */
  Type: string;
  ResourceName: string;
  ResourceID: string;
  Node: string;
  /** URL of the certwright instance. */
  Instance: string;
  Message: string;
  /** Current value (a number). */
  Value: number;
  /** Threshold crossed (a number). */
  Threshold: number;
  /** How long the alert has been active, e.g. `2h30m0s`. */
  Duration: string;
  /** When the alert was sent, RFC 3339. */
  Timestamp: string;
  /** When the alert started, RFC 3339. */
  StartTime: string;
}

export const ALERT_TEMPLATE_VARIABLES: readonly (keyof AlertTemplateData)[] = Object.freeze([
  'ID',
  'Level',
  'Type',
  'ResourceName',
  'ResourceID',
  'Node',
  'Instance',
  'Message',
  'Value',
  'Threshold',
  'Duration',
  'Timestamp',
  'StartTime',
]);
