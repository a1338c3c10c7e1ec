import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/auth/oidc/group-mappings'>['data'][number];

export default function GroupMappings() {
  return (
    <ResourceList<Row>
      title="OIDC group mappings"
      queryKey={['group-mappings']}
      load={() => api.get('/api/v1/auth/oidc/group-mappings')}
      rowKey={(r) => r.id}
      columns={[
        { key: 'group', header: 'Group', render: (r) => r.group },
        { key: 'role', header: 'Role', render: (r) => r.role },
        { key: 'provider', header: 'Provider', render: (r) => r.provider_id ?? 'any' },
        { key: 'created', header: 'Created', render: (r) => <DateTime value={r.created_at} /> },
      ]}
    />
  );
}
