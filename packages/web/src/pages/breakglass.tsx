import { useQuery } from '@tanstack/react-query';
import { api, type Response200 } from '../api';
import { DateTime, ErrorBox, Loading } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/auth/breakglass/credentials'>['data'][number];

/** Break-glass credentials, when the server has the feature on (docs/auth/breakglass.md). */
export default function Breakglass() {
  const options = useQuery({
    queryKey: ['auth', 'sign-in-options'],
    queryFn: () => api.get('/api/v1/auth/sign-in-options'),
  });
  if (options.isPending) return <Loading />;
  if (options.isError) return <ErrorBox error={options.error} />;
  if (!options.data.breakglass) {
    return (
      <>
        <h1>Break-glass credentials</h1>
        <p className="notice" role="status">
          Break-glass sign-in is off on this server. An operator turns it on with SVC_BREAKGLASS_ENABLED=true.
        </p>
      </>
    );
  }
  return (
    <ResourceList<Row>
      title="Break-glass credentials"
      empty="No break-glass credential is set. It is the emergency sign-in for when single sign-on is down: set one below and keep it offline."
      queryKey={['breakglass']}
      load={() => api.get('/api/v1/auth/breakglass/credentials')}
      rowKey={(r) => r.actor_id}
      columns={[
        { key: 'actor', header: 'Actor', render: (r) => r.actor_id },
        { key: 'locked', header: 'Locked', render: (r) => (r.locked ? 'locked' : 'no') },
        { key: 'used', header: 'Last used', render: (r) => <DateTime value={r.last_used_at} /> },
        { key: 'updated', header: 'Password set', render: (r) => <DateTime value={r.updated_at} /> },
      ]}
    />
  );
}
