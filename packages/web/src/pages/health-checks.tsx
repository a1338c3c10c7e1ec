import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { DateTime, ErrorBox, Loading, Section, StatusBadge } from '../components/common';
import { CreateForm } from '../components/create-form';
import { FilterSelect } from '../components/filter-select';
import { ResourceList } from '../components/resource-list';
import { iso } from '../format';
import { HEALTH_STATUSES, type HealthCheckSearch } from '../list-search';

type Check = Response200<'/api/v1/health-checks'>['data'][number];

function Summary() {
  const summary = useQuery({
    queryKey: ['health-checks', 'summary'],
    queryFn: () => api.get('/api/v1/health-checks/summary'),
  });
  if (summary.isPending) return <Loading what="Loading the health summary" />;
  if (summary.isError) return <ErrorBox error={summary.error} />;
  const s = summary.data;
  return (
    <p>
      {s.total} checks:{' '}
      {Object.entries(s.by_status)
        .map(([status, count]) => `${count} ${status}`)
        .join(', ') || 'none yet'}
      ; {s.unacknowledged} problems unacknowledged.
    </p>
  );
}

export default function HealthChecks() {
  const { status } = useSearch({ from: '/app/health-checks' }) as HealthCheckSearch;
  const navigate = useNavigate({ from: '/health-checks' });
  return (
    <>
      <ResourceList<Check>
        key={status ?? ''}
        title="TLS health checks"
        intro={<Summary />}
        queryKey={['health-checks', 'list', status ?? '']}
        load={(page, per_page) =>
          api.get('/api/v1/health-checks', { query: { page, per_page, ...(status ? { status } : {}) } })
        }
        toolbar={
          <FilterSelect
            label="Status"
            value={status}
            options={HEALTH_STATUSES}
            onChange={(next) => void navigate({ search: next ? { status: next } : {} })}
          />
        }
        rowKey={(c) => c.id}
        empty="No endpoints watched yet."
        columns={[
          {
            key: 'name',
            header: 'Name',
            render: (c) => (
              <Link to="/health-checks/$id" params={{ id: c.id }}>
                {c.name}
              </Link>
            ),
          },
          { key: 'endpoint', header: 'Endpoint', render: (c) => `${c.host}:${c.port}` },
          { key: 'status', header: 'Status', render: (c) => <StatusBadge status={c.status} /> },
          {
            key: 'ack',
            header: 'Acknowledged',
            render: (c) => (c.acknowledged_at ? <DateTime value={iso(c.acknowledged_at)} /> : '—'),
          },
          {
            key: 'checked',
            header: 'Last checked',
            render: (c) => <DateTime value={iso(c.last_checked_at)} />,
          },
          { key: 'error', header: 'Last error', render: (c) => c.last_error ?? '—' },
        ]}
      />
      <CreateForm
        title="New health check"
        permission="healthcheck.write"
        submitLabel="Create health check"
        invalidate={['health-checks']}
        fields={[
          { name: 'name', label: 'Name', required: true },
          { name: 'host', label: 'Host', required: true, hint: 'DNS name or address the server connects to' },
          { name: 'port', label: 'Port', required: true, hint: '1–65535, usually 443' },
          { name: 'sni', label: 'SNI name', hint: 'default: the host' },
          {
            name: 'expected_fingerprint',
            label: 'Expected SHA-256 fingerprint',
            hint: 'or give a managed certificate id below; empty: any valid certificate',
          },
          { name: 'certificate_id', label: 'Managed certificate id' },
          { name: 'interval_seconds', label: 'Interval (seconds)', hint: 'at least 30' },
        ]}
        create={(v) => {
          const port = Number(v.port);
          if (!Number.isInteger(port) || port < 1 || port > 65535)
            throw new Error(`port "${v.port ?? ''}" is not a number from 1 to 65535`);
          const interval = v.interval_seconds === undefined ? undefined : Number(v.interval_seconds);
          if (interval !== undefined && !Number.isInteger(interval))
            throw new Error('interval must be a whole number of seconds');
          return api.post('/api/v1/health-checks', {
            body: {
              name: v.name ?? '',
              host: v.host ?? '',
              port,
              ...(v.sni ? { sni: v.sni } : {}),
              ...(v.expected_fingerprint ? { expected_fingerprint: v.expected_fingerprint } : {}),
              ...(v.certificate_id ? { certificate_id: v.certificate_id } : {}),
              ...(interval !== undefined ? { interval_seconds: interval } : {}),
            },
          });
        }}
      />
      <Section title="About health checks">
        <p className="muted">
          A new check connects at once; its history is on its page. Acknowledging a problem hides it from the
          unacknowledged count until the next change of status.
        </p>
      </Section>
    </>
  );
}
