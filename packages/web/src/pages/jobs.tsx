import { useNavigate, useSearch } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { DateTime, StatusBadge } from '../components/common';
import { FilterSelect } from '../components/filter-select';
import { ResourceList } from '../components/resource-list';
import { formatDate } from '../format';
import { JOB_STATUSES, JOB_TYPES, type JobSearch } from '../list-search';
import { Named } from '../names';

type Job = Response200<'/api/v1/jobs'>['data'][number];

/** Jobs, newest first, filtered by the status, type and finish time in the URL. */
export default function Jobs() {
  const search = useSearch({ from: '/app/jobs' }) as JobSearch;
  const navigate = useNavigate({ from: '/jobs' });
  const update = (next: Partial<JobSearch>) =>
    navigate({ search: (prev: JobSearch) => ({ ...prev, ...next }) });
  return (
    <ResourceList<Job>
      // A new filter starts again at page 1.
      key={JSON.stringify(search)}
      title="Jobs"
      empty="No jobs match. Issuing, renewing and deploying certificates queue jobs here; they appear when you issue or renew a certificate."
      queryKey={['jobs', search]}
      load={(page, per_page) =>
        api.get('/api/v1/jobs', {
          query: { page, per_page, ...search, status: search.status ? [search.status] : undefined },
        })
      }
      toolbar={
        <>
          <FilterSelect
            label="Status"
            value={search.status}
            options={JOB_STATUSES}
            onChange={(status) => void update({ status })}
          />
          <FilterSelect
            label="Type"
            value={search.type}
            options={JOB_TYPES}
            onChange={(type) => void update({ type })}
          />
          {search.completed_after ? (
            <p className="record-filters">
              Finished since <strong>{formatDate(search.completed_after)}</strong>{' '}
              <button
                type="button"
                className="button small"
                aria-label="Remove the finish time filter"
                onClick={() => void update({ completed_after: undefined })}
              >
                ×
              </button>
            </p>
          ) : null}
        </>
      }
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
