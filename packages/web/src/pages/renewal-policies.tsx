import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/renewal-policies'>['data'][number];

export default function RenewalPolicies() {
  return (
    <ResourceList<Row>
      title="Renewal policies"
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
  );
}
