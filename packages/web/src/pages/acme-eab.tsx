import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/acme/eab-keys'>['data'][number];

export default function AcmeEabKeys() {
  return (
    <ResourceList<Row>
      title="ACME EAB keys"
      queryKey={['acme-eab']}
      load={(page, per_page) => api.get('/api/v1/acme/eab-keys', { query: { page, per_page } })}
      rowKey={(r) => r.id}
      columns={[
        { key: 'name', header: 'Name', render: (r) => r.name },
        { key: 'profile', header: 'Profile', render: (r) => r.profile_id ?? '—' },
        { key: 'account', header: 'Bound account', render: (r) => r.account_id ?? 'unbound' },
        { key: 'bound', header: 'Bound at', render: (r) => <DateTime value={r.bound_at} /> },
        { key: 'created', header: 'Created', render: (r) => <DateTime value={r.created_at} /> },
      ]}
    />
  );
}
