import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useMemo } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { DateTime, ErrorBox, Loading, Section, StatusBadge } from '../components/common';
import { ExpiryChart } from '../components/expiry-chart';
import { relativeTime } from '../expiry';
import { expiryBuckets } from '../format';
import { CERT_STATUSES } from '../router';

function Query<T>({
  query,
  children,
}: {
  query: { isPending: boolean; isError: boolean; error: unknown; data?: T };
  children: (data: T) => React.ReactNode;
}) {
  if (query.isPending) return <Loading />;
  if (query.isError) return <ErrorBox error={query.error} />;
  return <>{children(query.data as T)}</>;
}

export default function Dashboard() {
  const certRead = usePermission('cert.read');
  const auditRead = usePermission('audit.read');
  const scanRead = usePermission('scan.read');
  const healthRead = usePermission('healthcheck.read');
  // Taken once per mount, so the query keys stay stable while the page is open.
  const now = useMemo(() => new Date(), []);
  const horizon = useMemo(() => new Date(now.getTime() + 90 * 86_400_000), [now]);

  const byStatus = useQuery({
    queryKey: ['dashboard', 'by-status'],
    enabled: certRead.allowed,
    queryFn: async () =>
      Promise.all(
        CERT_STATUSES.map(async (status) => {
          const page = await api.get('/api/v1/certificates', { query: { status: [status], per_page: 1 } });
          return { status, total: page.total };
        }),
      ),
  });
  const expiring = useQuery({
    queryKey: ['dashboard', 'expiring', now.toISOString()],
    enabled: certRead.allowed,
    queryFn: () =>
      api.get('/api/v1/certificates', {
        query: {
          expires_after: now.toISOString(),
          expires_before: horizon.toISOString(),
          status: ['Active', 'Expiring', 'RenewalInProgress', 'Failed'],
          sort: 'expires_at',
          order: 'asc',
          per_page: 200,
        },
      }),
  });
  const summary = useQuery({
    queryKey: ['dashboard', 'summary'],
    enabled: certRead.allowed,
    queryFn: () => api.get('/api/v1/dashboard/summary'),
  });
  const health = useQuery({
    queryKey: ['dashboard', 'health'],
    enabled: healthRead.allowed,
    queryFn: () => api.get('/api/v1/health-checks/summary'),
  });
  const discovery = useQuery({
    queryKey: ['dashboard', 'discovery'],
    enabled: scanRead.allowed,
    queryFn: () => api.get('/api/v1/discovery/summary'),
  });
  const audit = useQuery({
    queryKey: ['dashboard', 'audit'],
    enabled: auditRead.allowed,
    queryFn: () => api.get('/api/v1/audit', { query: { per_page: 8 } }),
  });

  return (
    <>
      <h1>Dashboard</h1>
      <div className="grid">
        <Section title="Certificates by status">
          <Query query={byStatus}>
            {(rows) => (
              <ul className="status-counts">
                {rows.map(({ status, total }) => (
                  <li key={status}>
                    <Link to="/certificates" search={{ status: [status] }}>
                      <StatusBadge status={status} /> <span className="count">{total}</span>
                    </Link>
                  </li>
                ))}
              </ul>
            )}
          </Query>
        </Section>
        <Section title="Expiry timeline (next 90 days)">
          <Query query={expiring}>
            {(page) => (
              <ExpiryChart
                bins={expiryBuckets(
                  page.data.map((c) => c.expires_at ?? ''),
                  now,
                )}
              />
            )}
          </Query>
        </Section>
        <Section title="Expiring soon">
          <Query query={expiring}>
            {(page) =>
              page.data.length === 0 ? (
                <p className="muted">Nothing expires in the next 90 days.</p>
              ) : (
                <ol className="plain">
                  {page.data.slice(0, 10).map((cert) => (
                    <li key={cert.id}>
                      <Link to="/certificates/$id" params={{ id: cert.id }}>
                        {cert.name}
                      </Link>{' '}
                      <span className="muted">
                        {relativeTime(cert.expires_at ?? now, now)} (
                        <DateTime value={cert.expires_at} withTime={false} />)
                      </span>
                    </li>
                  ))}
                </ol>
              )
            }
          </Query>
        </Section>
        <Section title="Notifications, jobs and agents">
          <Query query={summary}>
            {(s) => (
              <dl className="facts">
                <dt>Dead notifications</dt>
                <dd className={s.dead_notifications > 0 ? 'warn' : ''}>{s.dead_notifications}</dd>
                <dt>Undeliverable notifications</dt>
                <dd className={s.undeliverable_notifications > 0 ? 'warn' : ''}>
                  {s.undeliverable_notifications}
                </dd>
                {Object.entries(s.jobs).map(([k, v]) => (
                  <div key={`job-${k}`} className="fact">
                    <dt>Jobs {k}</dt>
                    <dd>{v}</dd>
                  </div>
                ))}
                {Object.entries(s.agents).map(([k, v]) => (
                  <div key={`agent-${k}`} className="fact">
                    <dt>Agents {k}</dt>
                    <dd>{v}</dd>
                  </div>
                ))}
              </dl>
            )}
          </Query>
        </Section>
        {healthRead.allowed ? (
          <Section title="Endpoint health">
            <Query query={health}>
              {(h) => (
                <dl className="facts">
                  <dt>Checks</dt>
                  <dd>{h.total}</dd>
                  <dt>Unacknowledged problems</dt>
                  <dd className={h.unacknowledged > 0 ? 'warn' : ''}>{h.unacknowledged}</dd>
                  {Object.entries(h.by_status).map(([k, v]) => (
                    <div key={k} className="fact">
                      <dt>{k}</dt>
                      <dd>{v}</dd>
                    </div>
                  ))}
                </dl>
              )}
            </Query>
          </Section>
        ) : null}
        {scanRead.allowed ? (
          <Section title="Discovery">
            <Query query={discovery}>
              {(d) => (
                <dl className="facts">
                  <dt>Discovered</dt>
                  <dd>{d.total}</dd>
                  <dt>Unmanaged</dt>
                  <dd>{d.unmanaged}</dd>
                  <dt>Expired</dt>
                  <dd>{d.expired}</dd>
                  <dt>Expiring in 30 days</dt>
                  <dd>{d.expiring.days_30}</dd>
                  <dt>Scans running</dt>
                  <dd>{d.scans.running}</dd>
                </dl>
              )}
            </Query>
          </Section>
        ) : null}
        {auditRead.allowed ? (
          <Section title="Recent audit">
            <Query query={audit}>
              {(page) => (
                <ol className="plain">
                  {page.data.map((event) => (
                    <li key={event.id}>
                      <DateTime value={String(event.occurred_at)} /> <strong>{event.action}</strong>{' '}
                      <span className="muted">
                        {event.resource_type} by {event.actor_type} {event.actor}
                      </span>
                    </li>
                  ))}
                </ol>
              )}
            </Query>
          </Section>
        ) : null}
      </div>
    </>
  );
}
