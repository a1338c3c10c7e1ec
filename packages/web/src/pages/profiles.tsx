import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { NewProfile } from '../components/profile-form';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/profiles'>['data'][number];

function enrollment(r: Row): string {
  const on = (['acme', 'est', 'scep'] as const).filter((p) => r[p]?.enabled).map((p) => p.toUpperCase());
  return on.join(', ') || 'none';
}

export default function Profiles() {
  return (
    <>
      <ResourceList<Row>
        title="Profiles"
        empty="No profiles yet. A profile says what certificates may contain and how ACME, EST and SCEP clients enroll: create one below."
        intro="What certificates may contain (validity, keys, usages) and how ACME, EST and SCEP clients enroll for them."
        queryKey={['profiles']}
        load={(page, per_page) => api.get('/api/v1/profiles', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        columns={[
          { key: 'name', header: 'Name', render: (r) => r.name },
          { key: 'validity', header: 'Max validity (days)', render: (r) => r.max_validity_days ?? '—' },
          {
            key: 'keys',
            header: 'Key algorithms',
            render: (r) => r.allowed_key_algorithms?.map((a) => a.algorithm).join(', ') || 'any',
          },
          { key: 'enrollment', header: 'Enrollment', render: (r) => enrollment(r) },
          {
            key: 'scep-secret',
            header: 'SCEP challenge',
            render: (r) => (r.scep?.challenge_password_set ? 'set' : 'none'),
          },
          { key: 'desc', header: 'Description', render: (r) => r.description ?? '—' },
          { key: 'updated', header: 'Updated', render: (r) => <DateTime value={r.updated_at} /> },
        ]}
      />
      <NewProfile />
    </>
  );
}
