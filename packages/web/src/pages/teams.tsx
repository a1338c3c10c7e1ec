import { Link } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { CreateForm } from '../components/create-form';
import { ResourceList } from '../components/resource-list';

type Team = Response200<'/api/v1/teams'>['data'][number];

export default function Teams() {
  return (
    <>
      <ResourceList<Team>
        title="Teams"
        empty="No teams yet. Teams group certificates for filtering, dashboards and alerts: create one below, then assign certificates to it."
        queryKey={['teams']}
        load={(page, per_page) => api.get('/api/v1/teams', { query: { page, per_page } })}
        rowKey={(t) => t.id}
        columns={[
          {
            key: 'name',
            header: 'Name',
            render: (t) => (
              <Link to="/certificates" search={{ team_id: t.id }} title="their certificates">
                {t.name}
              </Link>
            ),
          },
          { key: 'desc', header: 'Description', render: (t) => t.description ?? '—' },
          { key: 'created', header: 'Created', render: (t) => <DateTime value={t.created_at} /> },
        ]}
      />
      <CreateForm
        title="New team"
        permission="team.write"
        submitLabel="Create team"
        invalidate={['teams']}
        fields={[
          { name: 'name', label: 'Name', required: true },
          { name: 'description', label: 'Description' },
        ]}
        create={(v) =>
          api.post('/api/v1/teams', {
            body: { name: v.name ?? '', ...(v.description ? { description: v.description } : {}) },
          })
        }
      />
    </>
  );
}
