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
      empty="No deployment targets yet. A target is where an agent installs a certificate (a web server, a keystore, a Kubernetes secret); agents create them when they register, or the API does."
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
