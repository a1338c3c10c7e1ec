import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { CreateForm } from '../components/create-form';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/issuers'>['data'][number];

export default function Issuers() {
  return (
    <>
      <ResourceList<Row>
        title="Issuers"
        queryKey={['issuers']}
        load={(page, per_page) => api.get('/api/v1/issuers', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        columns={[
          { key: 'name', header: 'Name', render: (r) => r.name },
          { key: 'type', header: 'Type', render: (r) => r.type },
          { key: 'enabled', header: 'Enabled', render: (r) => (r.enabled ? 'yes' : 'no') },
          { key: 'created', header: 'Created', render: (r) => <DateTime value={r.created_at} /> },
        ]}
      />
      <CreateForm
        title="New local CA"
        permission="issuer.write"
        submitLabel="Create issuer"
        invalidate={['issuers']}
        fields={[
          {
            name: 'name',
            label: 'Name',
            required: true,
            hint: 'A local CA whose key the server generates and keeps.',
          },
        ]}
        create={(v) => api.post('/api/v1/issuers', { body: { name: v.name ?? '', type: 'Local' } })}
      />
    </>
  );
}
