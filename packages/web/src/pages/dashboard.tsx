import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { DateTime, ErrorBox, Loading, Section, StatusBadge } from '../components/common';
import { ExpiryChart } from '../components/expiry-chart';
import { formatDate, iso } from '../format';
import { Actor, auditRefs, Resource, useNames } from '../names';
import { CERT_STATUSES, type CertStatus } from '../router';

type Overview = Response200<'/api/v1/dashboard/overview'>;
type Summary = Response200<'/api/v1/dashboard/summary'>;
type Health = Response200<'/api/v1/health-checks/summary'>;

/** The statuses the timeline and "due this week" count (the server's LIVE_STATUSES). */
const LIVE: CertStatus[] = ['Active', 'Expiring', 'RenewalInProgress', 'Failed'];
const WEEK = 7 * 86_400_000;

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

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;
/** "about" where the database estimated a count (more than 1,000 matched). */
const approx = (c: { total: number; estimated: boolean }) =>
  `${c.estimated ? 'about ' : ''}${c.total.toLocaleString()}`;

/** One problem, linking to the list that shows exactly what it counts. */
type Problem = { label: string; count: number; link: (text: string) => React.ReactNode };

/** Problems first: each non-zero count links to its filtered list; nothing shown when all is well. */
function Problems({
  summary,
  health,
  violations,
}: {
  summary: Summary;
  health: Health | undefined;
  /** Open policy violations; undefined without `policy.read`. */
  violations: number | undefined;
}) {
  const all: Problem[] = [
    {
      label: 'failed certificates',
      count: summary.certificates.by_status.Failed ?? 0,
      link: (text) => (
        <Link to="/certificates" search={{ status: ['Failed'] }}>
          {text}
        </Link>
      ),
    },
    {
      label: 'failed jobs',
      count: summary.jobs.Failed ?? 0,
      link: (text) => (
        <Link to="/jobs" search={{ status: 'Failed' }}>
          {text}
        </Link>
      ),
    },
    {
      label: 'dead notifications',
      count: summary.dead_notifications,
      link: (text) => (
        <Link to="/notifications" search={{ status: 'dead' }}>
          {text}
        </Link>
      ),
    },
    {
      label: 'undeliverable notifications',
      count: summary.undeliverable_notifications,
      link: (text) => (
        <Link to="/notifications" search={{ status: 'undeliverable' }}>
          {text}
        </Link>
      ),
    },
    {
      label: 'policy violations',
      count: violations ?? 0,
      link: (text) => <Link to="/policies/violations">{text}</Link>,
    },
    ...(['down', 'degraded', 'cert_mismatch'] as const).map((status) => ({
      label: `endpoints ${status.replace('_', ' ')}`,
      count: health?.by_status[status] ?? 0,
      link: (text: string) => (
        <Link to="/health-checks" search={{ status }}>
          {text}
        </Link>
      ),
    })),
  ];
  const problems = all.filter((p) => p.count > 0);
  if (problems.length === 0) return <p className="ok-note">Nothing needs attention.</p>;
  return (
    <ul className="problems">
      {problems.map((p) => (
        <li key={p.label}>{p.link(`${p.count.toLocaleString()} ${p.label}`)}</li>
      ))}
    </ul>
  );
}

function Timeline({ overview }: { overview: Overview }) {
  const bins = overview.expiry_timeline.map((b) => ({
    start: new Date(String(b.starts_at)),
    end: new Date(String(b.ends_at)),
    count: b.total,
  }));
  return (
    <>
      <ExpiryChart bins={bins} />
      <ul className="week-links">
        {overview.expiry_timeline
          .filter((b) => b.total > 0)
          .map((b) => (
            <li key={iso(b.starts_at)}>
              <Link
                to="/certificates"
                search={{
                  status: LIVE,
                  expires_after: iso(b.starts_at) ?? undefined,
                  expires_before: iso(b.ends_at) ?? undefined,
                  sort: 'expires_at',
                  order: 'asc',
                }}
              >
                {formatDate(iso(b.starts_at), false)} – {formatDate(iso(b.ends_at), false)}:{' '}
                {plural(b.total, 'certificate')}
                {b.estimated ? ' (estimate)' : ''}
              </Link>
            </li>
          ))}
      </ul>
    </>
  );
}

function Renewals({ overview }: { overview: Overview }) {
  const r = overview.renewals;
  const asOf = new Date(String(overview.as_of));
  const since = new Date(asOf.getTime() - WEEK).toISOString();
  return (
    <dl className="facts">
      <dt>Due this week</dt>
      <dd>
        <Link
          to="/certificates"
          search={{
            status: LIVE,
            expires_after: asOf.toISOString(),
            expires_before: new Date(asOf.getTime() + WEEK).toISOString(),
            sort: 'expires_at',
            order: 'asc',
          }}
        >
          {approx(r.due_this_week)} expiring within 7 days
        </Link>
      </dd>
      <dt>Renewed in the last 7 days</dt>
      <dd>
        <Link to="/jobs" search={{ type: 'Renewal', status: 'Completed', completed_after: since }}>
          {r.completed_last_7_days.toLocaleString()}
        </Link>
      </dd>
      <dt>Failed in the last 7 days</dt>
      <dd className={r.failed_last_7_days > 0 ? 'warn' : ''}>
        <Link to="/jobs" search={{ type: 'Renewal', status: 'Failed', completed_after: since }}>
          {r.failed_last_7_days.toLocaleString()}
        </Link>
      </dd>
      <dt>Success rate</dt>
      <dd>{r.success_rate === null ? 'no renewal finished' : `${Math.round(r.success_rate * 100)}%`}</dd>
    </dl>
  );
}

function Groups({
  rows,
  more,
  kind,
}: {
  rows: Overview['by_issuer'];
  more: number;
  kind: 'issuer' | 'team';
}) {
  if (rows.length === 0) return <p className="muted">No {kind}s yet.</p>;
  return (
    <>
      <ol className="plain">
        {rows.map((g) => (
          <li key={g.id}>
            <Link to="/certificates" search={kind === 'issuer' ? { issuer_id: g.id } : { team_id: g.id }}>
              {g.name}
            </Link>{' '}
            <span className="count">{approx(g)}</span>
          </li>
        ))}
      </ol>
      {more > 0 ? (
        <p className="muted">
          {plural(more, `more ${kind}`)} not counted here:{' '}
          <Link to={kind === 'issuer' ? '/issuers' : '/teams'}>all {kind}s</Link>.
        </p>
      ) : null}
    </>
  );
}

function RecentAudit() {
  const audit = useQuery({
    queryKey: ['dashboard', 'audit'],
    queryFn: () => api.get('/api/v1/audit', { query: { per_page: 8 } }),
  });
  const names = useNames(audit.data?.data, auditRefs);
  return (
    <Query query={audit}>
      {(page) => (
        <ol className="plain">
          {page.data.map((event) => (
            <li key={event.id}>
              <DateTime value={String(event.occurred_at)} /> <strong>{event.action}</strong>{' '}
              <span className="muted">
                <Resource type={event.resource_type} id={event.resource_id} names={names} /> by{' '}
                <Actor names={names} type={event.actor_type} id={event.actor} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </Query>
  );
}

export default function Dashboard() {
  const certRead = usePermission('cert.read');
  const auditRead = usePermission('audit.read');
  const scanRead = usePermission('scan.read');
  const healthRead = usePermission('healthcheck.read');
  const policyRead = usePermission('policy.read');

  const overview = useQuery({
    queryKey: ['dashboard', 'overview'],
    enabled: certRead.allowed,
    queryFn: () => api.get('/api/v1/dashboard/overview'),
  });
  const summary = useQuery({
    queryKey: ['dashboard', 'summary'],
    enabled: certRead.allowed,
    queryFn: () => api.get('/api/v1/dashboard/summary'),
  });
  const violations = useQuery({
    queryKey: ['dashboard', 'violations'],
    enabled: policyRead.allowed,
    queryFn: () => api.get('/api/v1/violations', { query: { per_page: 1 } }),
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

  return (
    <>
      <h1>Dashboard</h1>
      <div className="grid">
        <Section title="Needs attention" className="wide">
          <Query query={summary}>
            {(s) => <Problems summary={s} health={health.data} violations={violations.data?.total} />}
          </Query>
        </Section>
        <Section title="Expiry timeline (next 13 weeks)" className="wide">
          <Query query={overview}>{(o) => <Timeline overview={o} />}</Query>
        </Section>
        <Section title="Certificates by status">
          <Query query={summary}>
            {(s) => (
              <ul className="status-counts">
                {CERT_STATUSES.map((status) => (
                  <li key={status}>
                    <Link to="/certificates" search={{ status: [status] }}>
                      <StatusBadge status={status} />{' '}
                      <span className="count">{s.certificates.by_status[status] ?? 0}</span>
                    </Link>
                  </li>
                ))}
              </ul>
            )}
          </Query>
        </Section>
        <Section title="Renewals">
          <Query query={overview}>{(o) => <Renewals overview={o} />}</Query>
        </Section>
        <Section title="Certificates by issuer">
          <Query query={overview}>
            {(o) => <Groups rows={o.by_issuer} more={o.issuers_more} kind="issuer" />}
          </Query>
        </Section>
        <Section title="Certificates by team">
          <Query query={overview}>{(o) => <Groups rows={o.by_team} more={o.teams_more} kind="team" />}</Query>
        </Section>
        <Section title="Jobs and agents">
          <Query query={summary}>
            {(s) => (
              <dl className="facts">
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
            <RecentAudit />
          </Section>
        ) : null}
      </div>
    </>
  );
}
