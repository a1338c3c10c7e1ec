import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { CreateForm } from '../components/create-form';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/renewal-policies'>['data'][number];

/** A whole number from a form field, or undefined when empty; anything else names the field. */
function whole(label: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new Error(`${label} must be a whole number`);
  return Number(text);
}

export default function RenewalPolicies() {
  return (
    <>
      <ResourceList<Row>
        title="Renewal policies"
        empty="No renewal policies yet. A policy says how long before expiry a certificate is renewed: create one below and attach it to certificates."
        queryKey={['renewal-policies']}
        load={(page, per_page) => api.get('/api/v1/renewal-policies', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        columns={[
          { key: 'name', header: 'Name', render: (r) => r.name },
          { key: 'window', header: 'Renewal window (days)', render: (r) => r.renewal_window_days },
          {
            key: 'alerts',
            header: 'Alert thresholds (days)',
            render: (r) => r.alert_thresholds_days.join(', ') || '—',
          },
          { key: 'retries', header: 'Max retries', render: (r) => r.max_retries },
          { key: 'updated', header: 'Updated', render: (r) => <DateTime value={r.updated_at} /> },
        ]}
      />
      <CreateForm
        title="New renewal policy"
        permission="renewal_policy.write"
        submitLabel="Create renewal policy"
        invalidate={['renewal-policies']}
        fields={[
          { name: 'name', label: 'Name', required: true },
          {
            name: 'renewal_window_days',
            label: 'Renewal window (days)',
            hint: 'renew this many days before expiry',
          },
          { name: 'max_retries', label: 'Max retries' },
          { name: 'retry_interval_seconds', label: 'Retry interval (seconds)' },
          {
            name: 'alert_thresholds_days',
            label: 'Alert thresholds (days)',
            hint: 'comma-separated, e.g. 30, 14, 7',
          },
        ]}
        create={(v) => {
          const window = whole('renewal window', v.renewal_window_days);
          const retries = whole('max retries', v.max_retries);
          const interval = whole('retry interval', v.retry_interval_seconds);
          const thresholds = v.alert_thresholds_days
            ?.split(/[\s,]+/)
            .filter((t) => t !== '')
            .map((t) => whole('each alert threshold', t) as number);
          return api.post('/api/v1/renewal-policies', {
            body: {
              name: v.name ?? '',
              ...(window !== undefined ? { renewal_window_days: window } : {}),
              ...(retries !== undefined ? { max_retries: retries } : {}),
              ...(interval !== undefined ? { retry_interval_seconds: interval } : {}),
              ...(thresholds ? { alert_thresholds_days: thresholds } : {}),
            },
          });
        }}
      />
    </>
  );
}
