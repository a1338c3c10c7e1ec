import { api, type Response200 } from '../api';
import { DateTime, StatusBadge } from '../components/common';
import { ResourceList } from '../components/resource-list';
import { iso } from '../format';

type Agent = Response200<'/api/v1/agents'>['data'][number];

export default function Agents() {
  return (
    <ResourceList<Agent>
      title="Agents"
      queryKey={['agents']}
      load={(page, per_page) => api.get('/api/v1/agents', { query: { page, per_page } })}
      rowKey={(a) => a.id}
      columns={[
        { key: 'name', header: 'Name', render: (a) => a.name },
        { key: 'status', header: 'Status', render: (a) => <StatusBadge status={a.status} /> },
        {
          key: 'host',
          header: 'Host',
          render: (a) => `${a.hostname}${a.ip_address ? ` (${a.ip_address})` : ''}`,
        },
        { key: 'version', header: 'Version', render: (a) => a.version ?? '—' },
        {
          key: 'seen',
          header: 'Last heartbeat',
          render: (a) => <DateTime value={iso(a.last_heartbeat_at)} />,
        },
        {
          key: 'retired',
          header: 'Retired',
          render: (a) => (a.retired_at ? <DateTime value={iso(a.retired_at)} /> : '—'),
        },
      ]}
    />
  );
}
