/** The variables a webhook template sees (docs/notifications/webhooks.md), with sample values. */
export const TEMPLATE_VARIABLES: readonly { name: string; help: string; sample: string | number }[] = [
  { name: 'ID', help: "the notification event's id, also the Idempotency-Key", sample: 'ntf-0123' },
  { name: 'Level', help: 'critical, warning or info', sample: 'warning' },
  { name: 'Type', help: 'the notification type', sample: 'ExpirationWarning' },
  { name: 'ResourceName', help: "the certificate's name", sample: 'shop-frontend' },
  { name: 'ResourceID', help: "the certificate's id", sample: 'crt-42' },
  { name: 'Node', help: 'host name of the sending instance', sample: 'cw-1' },
  { name: 'Instance', help: "the instance's URL", sample: 'https://certwright.example' },
  {
    name: 'Message',
    help: "the notification's subject",
    sample: 'Certificate shop-frontend expires in 5 day(s)',
  },
  { name: 'Value', help: 'days left until expiry', sample: 5 },
  { name: 'Threshold', help: 'the alert threshold (days) crossed', sample: 7 },
  { name: 'Duration', help: 'time since the event was raised', sample: '2h30m0s' },
  {
    name: 'Timestamp',
    help: 'when this delivery attempt is made (RFC 3339)',
    sample: '2026-01-01T10:00:00Z',
  },
  { name: 'StartTime', help: 'when the event was raised (RFC 3339)', sample: '2026-01-01T07:30:00Z' },
];

const SAMPLES = new Map(TEMPLATE_VARIABLES.map((v) => [v.name, v.sample]));

/**
 * A live preview of a template with sample values: plain `{{.Name}}` and `{{.Name | json}}`
 * are filled in; any other action (functions, pipelines, conditionals) is shown as it stands
 * and flagged, since only the server evaluates the full template language (the Test button).
 */
export function previewTemplate(template: string): { text: string; unevaluated: string[] } {
  const unevaluated: string[] = [];
  const text = template.replace(/\{\{-?\s*([^}]*?)\s*-?\}\}/g, (whole, action: string) => {
    const plain = /^\.([A-Za-z]+)$/.exec(action);
    const json = /^\.([A-Za-z]+)\s*\|\s*json$/.exec(action);
    const name = plain?.[1] ?? json?.[1];
    if (name && SAMPLES.has(name)) {
      const value = SAMPLES.get(name) as string | number;
      return json ? JSON.stringify(value) : String(value);
    }
    unevaluated.push(whole);
    return whole;
  });
  return { text, unevaluated };
}
