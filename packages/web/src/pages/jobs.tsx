import { Link } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { DateTime, StatusBadge } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Job = Response200<'/api/v1/jobs'>['data'][number];

export default function Jobs() {
  return (
    <ResourceList<Job>
      title="Jobs"
      queryKey={['jobs']}
      load={(page, per_page) => api.get('/api/v1/jobs', { query: { page, per_page } })}
      rowKey={(j) => j.id}
      columns={[
        { key: 'type', header: 'Type', render: (j) => j.type },
        { key: 'status', header: 'Status', render: (j) => <StatusBadge status={j.status} /> },
        {
          key: 'cert',
          header: 'Certificate',
          render: (j) =>
            j.certificate_id ? (
              <Link to="/certificates/$id" params={{ id: j.certificate_id }}>
                {j.certificate_id}
              </Link>
            ) : (
              '—'
            ),
        },
        { key: 'attempts', header: 'Attempts', render: (j) => `${j.attempts} of ${j.max_attempts}` },
        { key: 'created', header: 'Created', render: (j) => <DateTime value={String(j.created_at)} /> },
        { key: 'error', header: 'Last error', render: (j) => j.last_error ?? '—' },
      ]}
    />
  );
}
