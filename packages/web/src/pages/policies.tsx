import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { CreateForm } from '../components/create-form';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/policies'>['data'][number];

const TYPES = [
  'AllowedIssuers',
  'AllowedDomains',
  'RequiredMetadata',
  'AllowedEnvironments',
  'RenewalLeadTime',
  'CertificateLifetime',
] as const;
const SEVERITIES = ['Warning', 'Error', 'Critical'] as const;

/** The config field is a JSON object (or empty); anything else is refused here with the reason. */
export function parseConfig(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('config is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error('config must be a JSON object, for example {"domains": ["example.com"]}');
  return value as Record<string, unknown>;
}

export default function Policies() {
  return (
    <>
      <ResourceList<Row>
        title="Policy rules"
        queryKey={['policies']}
        load={(page, per_page) => api.get('/api/v1/policies', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        columns={[
          { key: 'name', header: 'Name', render: (r) => r.name },
          { key: 'type', header: 'Type', render: (r) => r.type },
          { key: 'severity', header: 'Severity', render: (r) => r.severity },
          { key: 'enabled', header: 'Enabled', render: (r) => (r.enabled ? 'yes' : 'no') },
          { key: 'updated', header: 'Updated', render: (r) => <DateTime value={r.updated_at} /> },
        ]}
      />
      <CreateForm
        title="New policy rule"
        permission="policy.write"
        submitLabel="Create policy rule"
        invalidate={['policies']}
        fields={[
          { name: 'name', label: 'Name', required: true },
          { name: 'type', label: 'Type', type: 'select', options: TYPES },
          { name: 'severity', label: 'Severity', type: 'select', options: SEVERITIES },
          {
            name: 'config',
            label: 'Config (JSON)',
            hint: "the rule type's settings as a JSON object; see docs/api for each type",
          },
          { name: 'description', label: 'Description' },
        ]}
        create={(v) =>
          api.post('/api/v1/policies', {
            body: {
              name: v.name ?? '',
              type: (v.type ?? 'AllowedIssuers') as (typeof TYPES)[number],
              severity: (v.severity ?? 'Warning') as (typeof SEVERITIES)[number],
              ...(v.config ? { config: parseConfig(v.config) ?? null } : {}),
              ...(v.description ? { description: v.description } : {}),
            },
          })
        }
      />
    </>
  );
}
