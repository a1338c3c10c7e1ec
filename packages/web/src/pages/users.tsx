import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/auth/users'>['data'][number];

export default function Users() {
  return (
    <ResourceList<Row>
      title="Users"
      queryKey={['users']}
      load={(page, per_page) => api.get('/api/v1/auth/users', { query: { page, per_page } })}
      rowKey={(r) => r.id}
      columns={[
        { key: 'name', header: 'Name', render: (r) => r.display_name ?? r.subject },
        { key: 'email', header: 'Email', render: (r) => r.email ?? '—' },
        { key: 'provider', header: 'Provider', render: (r) => r.provider_id ?? 'local' },
        { key: 'login', header: 'Last sign-in', render: (r) => <DateTime value={r.last_login_at} /> },
        { key: 'state', header: 'State', render: (r) => (r.deactivated_at ? 'deactivated' : 'active') },
      ]}
    />
  );
}
