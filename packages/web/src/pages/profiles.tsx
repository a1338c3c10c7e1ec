import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/profiles'>['data'][number];

export default function Profiles() {
  return (
    <ResourceList<Row>
      title="Profiles"
      queryKey={['profiles']}
      load={(page, per_page) => api.get('/api/v1/profiles', { query: { page, per_page } })}
      rowKey={(r) => r.id}
      columns={[
        { key: 'name', header: 'Name', render: (r) => r.name },
        { key: 'validity', header: 'Max validity (days)', render: (r) => r.max_validity_days ?? '—' },
        {
          key: 'keys',
          header: 'Key algorithms',
          render: (r) => r.allowed_key_algorithms?.join(', ') || 'any',
        },
        { key: 'desc', header: 'Description', render: (r) => r.description ?? '—' },
        { key: 'updated', header: 'Updated', render: (r) => <DateTime value={r.updated_at} /> },
      ]}
    />
  );
}
