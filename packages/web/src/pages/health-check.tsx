import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox, Loading, Section, StatusBadge } from '../components/common';
import { DataTable, Pager } from '../components/table';
import { iso } from '../format';

type Result = Response200<'/api/v1/health-checks/{id}/history'>['data'][number];

export default function HealthCheck() {
  const { id } = useParams({ from: '/app/health-checks/$id' });
  const client = useQueryClient();
  const ack = usePermission('healthcheck.acknowledge');
  const [page, setPage] = useState(1);
  const check = useQuery({
    queryKey: ['health-checks', 'one', id],
    queryFn: () => api.get('/api/v1/health-checks/{id}', { params: { id } }),
  });
  const history = useQuery({
    queryKey: ['health-checks', 'history', id, page],
    queryFn: () =>
      api.get('/api/v1/health-checks/{id}/history', { params: { id }, query: { page, per_page: 25 } }),
  });
  const acknowledge = useMutation({
    mutationFn: () => api.post('/api/v1/health-checks/{id}/acknowledge', { params: { id } }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['health-checks'] });
    },
  });
  if (check.isPending) return <Loading what="Loading the health check" />;
  if (check.isError) return <ErrorBox error={check.error} />;
  const c = check.data;
  const problem = c.status !== 'healthy';
  return (
    <>
      <p>
        <Link to="/health-checks">← TLS health checks</Link>
      </p>
      <h1>{c.name}</h1>
      <Section
        title="Current state"
        actions={
          <ActionButton
            {...(problem
              ? ack
              : { allowed: false, reason: 'Nothing to acknowledge: the endpoint is healthy' })}
            onClick={() => acknowledge.mutate()}
            disabled={acknowledge.isPending || c.acknowledged_at !== null}
          >
            Acknowledge
          </ActionButton>
        }
      >
        {acknowledge.isError ? <ErrorBox error={acknowledge.error} /> : null}
        <dl className="details">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={c.status} />
          </dd>
          <dt>Endpoint</dt>
          <dd>
            {c.host}:{c.port}
            {c.sni ? ` (SNI ${c.sni})` : ''}
          </dd>
          <dt>Expected fingerprint</dt>
          <dd className="mono">{c.expected_fingerprint ?? 'any valid certificate'}</dd>
          <dt>Served certificate</dt>
          <dd>{c.observed ? `${c.observed.subject}, issued by ${c.observed.issuer}` : '—'}</dd>
          <dt>Last checked</dt>
          <dd>
            <DateTime value={iso(c.last_checked_at)} />
          </dd>
          <dt>Last error</dt>
          <dd>{c.last_error ?? '—'}</dd>
          <dt>Acknowledged</dt>
          <dd>
            {c.acknowledged_at ? (
              <>
                <DateTime value={iso(c.acknowledged_at)} /> by {c.acknowledged_by ?? '—'}
              </>
            ) : (
              'no'
            )}
          </dd>
        </dl>
      </Section>
      <Section title="History">
        {history.isPending ? <Loading what="Loading the history" /> : null}
        {history.isError ? <ErrorBox error={history.error} /> : null}
        {history.data ? (
          <>
            <DataTable<Result>
              caption="Check history"
              rows={history.data.data}
              rowKey={(r) => r.id}
              empty="Not checked yet."
              columns={[
                { key: 'at', header: 'Checked', render: (r) => <DateTime value={iso(r.checked_at)} /> },
                { key: 'ok', header: 'Handshake', render: (r) => (r.success ? 'succeeded' : 'failed') },
                { key: 'status', header: 'Status after', render: (r) => <StatusBadge status={r.status} /> },
                { key: 'tls', header: 'TLS', render: (r) => r.tls_version ?? '—' },
                {
                  key: 'ms',
                  header: 'Handshake time',
                  render: (r) => (r.handshake_ms === null ? '—' : `${Math.round(r.handshake_ms)} ms`),
                },
                { key: 'error', header: 'Error', render: (r) => r.error ?? '—' },
              ]}
            />
            {(history.data.total ?? 0) > 25 ? (
              <Pager page={page} perPage={25} total={history.data.total ?? 0} onPage={setPage} />
            ) : null}
          </>
        ) : null}
      </Section>
    </>
  );
}
