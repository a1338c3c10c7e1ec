import { Link } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { NewIssuer } from '../components/issuer-form';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/issuers'>['data'][number];

export default function Issuers() {
  return (
    <>
      <ResourceList<Row>
        title="Issuers"
        empty="No issuers yet. Certificates are issued through an issuer: create a Local CA or connect an external ACME CA on this page."
        intro="The certificate authorities certificates are issued through: Local CAs this server runs, and external ACME CAs."
        queryKey={['issuers']}
        load={(page, per_page) => api.get('/api/v1/issuers', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        columns={[
          {
            key: 'name',
            header: 'Name',
            render: (r) => (
              <Link to="/issuers/$id" params={{ id: r.id }}>
                {r.name}
              </Link>
            ),
          },
          { key: 'type', header: 'Type', render: (r) => r.type },
          { key: 'enabled', header: 'Enabled', render: (r) => (r.enabled ? 'yes' : 'no') },
          { key: 'created', header: 'Created', render: (r) => <DateTime value={r.created_at} /> },
        ]}
      />
      <NewIssuer />
    </>
  );
}
