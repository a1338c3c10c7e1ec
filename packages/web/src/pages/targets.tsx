import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { ResourceList } from '../components/resource-list';
import { iso } from '../format';
import { Named } from '../names';

type Target = Response200<'/api/v1/targets'>['data'][number];

export default function Targets() {
  return (
    <ResourceList<Target>
      title="Targets"
      queryKey={['targets']}
      load={(page, per_page) => api.get('/api/v1/targets', { query: { page, per_page } })}
      rowKey={(t) => t.id}
      refs={(t) => [['agent', t.agent_id]]}
      columns={(names) => [
        { key: 'name', header: 'Name', render: (t) => t.name },
        { key: 'type', header: 'Type', render: (t) => t.type },
        {
          key: 'agent',
          header: 'Agent',
          render: (t) => <Named names={names} kind="agent" id={t.agent_id} />,
        },
        { key: 'enabled', header: 'Enabled', render: (t) => (t.enabled ? 'yes' : 'no') },
        { key: 'updated', header: 'Updated', render: (t) => <DateTime value={iso(t.updated_at)} /> },
      ]}
    />
  );
}
