import { Link } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { CreateForm } from '../components/create-form';
import { ResourceList } from '../components/resource-list';

type Owner = Response200<'/api/v1/owners'>['data'][number];

export default function Owners() {
  return (
    <>
      <ResourceList<Owner>
        title="Owners"
        empty="No owners yet. An owner is who answers for a certificate (and is notified about it): create one below, then assign certificates."
        queryKey={['owners']}
        load={(page, per_page) => api.get('/api/v1/owners', { query: { page, per_page } })}
        rowKey={(o) => o.id}
        columns={[
          {
            key: 'name',
            header: 'Name',
            render: (o) => (
              <Link to="/certificates" search={{ owner_id: o.id }} title="their certificates">
                {o.name}
              </Link>
            ),
          },
          { key: 'email', header: 'Email', render: (o) => o.email ?? '—' },
          { key: 'created', header: 'Created', render: (o) => <DateTime value={o.created_at} /> },
        ]}
      />
      <CreateForm
        title="New owner"
        permission="owner.write"
        submitLabel="Create owner"
        invalidate={['owners']}
        fields={[
          { name: 'name', label: 'Name', required: true },
          { name: 'email', label: 'Email', type: 'email' },
        ]}
        create={(v) =>
          api.post('/api/v1/owners', { body: { name: v.name ?? '', ...(v.email ? { email: v.email } : {}) } })
        }
      />
    </>
  );
}
