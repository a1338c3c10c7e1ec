import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { PolicyRuleForm } from '../components/policy-rule-form';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/policies'>['data'][number];

export default function Policies() {
  return (
    <>
      <ResourceList<Row>
        title="Policy rules"
        empty="No policy rules yet. Rules flag certificates that break your standards (weak keys, long validity, missing owners): create one below."
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
      <PolicyRuleForm />
    </>
  );
}
