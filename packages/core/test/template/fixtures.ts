import type { AlertTemplateData } from '../../src/notify/template/index.js';

/** An alert with all 13 variables, for tests and benchmarks. */
export const ALERT: AlertTemplateData = {
  ID: 'alert-42',
  Level: 'critical',
  Type: 'cpu',
  ResourceName: 'web-01',
  ResourceID: 'vm/101',
  Node: 'pve1',
  Instance: 'https://monitor.example.test',
  Message: 'CPU usage is 95.5% (threshold 90%) on "web-01"',
  Value: 95.5,
  Threshold: 90,
  Duration: '5m0s',
  Timestamp: '2024-05-01T12:00:00Z',
  StartTime: '2024-05-01T11:55:00Z',
};

/** The alert plus the shapes Go templates range and index over. */
export const DATA = {
  ...ALERT,
  List: ['a', 'b', 'c'],
  Ints: [1, 2],
  Empty: '',
  EmptyList: [],
  Map: { b: 2, a: 1, c: 3 },
  Labels: { env: 'prod', team: 'infra' },
  Items: [{ Name: 'first' }, { Name: 'second' }],
  Nothing: null,
};

/** A custom JSON payload of the size of a built-in chat message. */
export const CUSTOM_JSON_TEMPLATE = `{
  "title": {{printf "[%s] %s" (.Level | upper) .ResourceName | json}},
  "text": {{.Message | json}},
  "severity": {{if eq .Level "critical"}}"high"{{else if eq .Level "warning"}}"medium"{{else}}"low"{{end}},
  "value": {{printf "%.1f" .Value}},
  "threshold": {{.Threshold}},
  "resource": {"id": {{.ResourceID | json}}, "node": {{.Node | json}}, "type": {{.Type | json}}},
  "started": {{.StartTime | json}},
  "link": {{printf "%s/alerts/%s" .Instance (.ID | urlpath) | json}}
}`;

/** A short custom template: one line of text. */
export const SHORT_TEMPLATE = '{{.Level | title}}: {{.ResourceName}} {{printf "%.1f" .Value}}/{{.Threshold}}';
