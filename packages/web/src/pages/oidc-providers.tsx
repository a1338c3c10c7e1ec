import { api, type Response200 } from '../api';
import { DateTime } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/auth/oidc/providers'>['data'][number];

export default function OidcProviders() {
  return (
    <ResourceList<Row>
      title="OIDC providers"
      queryKey={['oidc-providers']}
      load={() => api.get('/api/v1/auth/oidc/providers')}
      rowKey={(r) => r.id}
      columns={[
        { key: 'name', header: 'Name', render: (r) => r.name },
        { key: 'issuer', header: 'Issuer', render: (r) => <code>{r.issuer}</code> },
        { key: 'client', header: 'Client id', render: (r) => r.client_id },
        {
          key: 'secret',
          header: 'Client secret',
          render: (r) => (r.client_secret_set ? 'set (write-only)' : 'none'),
        },
        { key: 'enabled', header: 'Enabled', render: (r) => (r.enabled ? 'yes' : 'no') },
        { key: 'updated', header: 'Updated', render: (r) => <DateTime value={r.updated_at} /> },
      ]}
    />
  );
}
