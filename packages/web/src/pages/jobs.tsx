import { api, type Response200 } from '../api';
import { DateTime, StatusBadge } from '../components/common';
import { ResourceList } from '../components/resource-list';
import { Named } from '../names';

type Job = Response200<'/api/v1/jobs'>['data'][number];

export default function Jobs() {
  return (
    <ResourceList<Job>
      title="Jobs"
      empty="No jobs yet. Issuing, renewing and deploying certificates queue jobs here; they appear when you issue or renew a certificate."
      queryKey={['jobs']}
      load={(page, per_page) => api.get('/api/v1/jobs', { query: { page, per_page } })}
      rowKey={(j) => j.id}
      refs={(j) => [
        ['certificate', j.certificate_id],
        ['target', j.target_id],
        ['agent', j.agent_id],
      ]}
      columns={(names) => [
        { key: 'type', header: 'Type', render: (j) => j.type },
        { key: 'status', header: 'Status', render: (j) => <StatusBadge status={j.status} /> },
        {
          key: 'cert',
          header: 'Certificate',
          render: (j) => <Named names={names} kind="certificate" id={j.certificate_id} />,
        },
        {
          key: 'target',
          header: 'Target',
          render: (j) => <Named names={names} kind="target" id={j.target_id} />,
        },
        {
          key: 'agent',
          header: 'Agent',
          render: (j) => <Named names={names} kind="agent" id={j.agent_id} />,
        },
        { key: 'attempts', header: 'Attempts', render: (j) => `${j.attempts} of ${j.max_attempts}` },
        { key: 'created', header: 'Created', render: (j) => <DateTime value={String(j.created_at)} /> },
        { key: 'error', header: 'Last error', render: (j) => j.last_error ?? '—' },
      ]}
    />
  );
}
