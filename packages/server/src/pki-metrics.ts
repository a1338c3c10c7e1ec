import type { Clock, Logger, ManagedCertificate, Storage } from '@certwright/core';
import { Gauge, type Registry } from 'prom-client';

/** What the PKI gauges read: counts the repositories keep, and the inventory page by page. */
export type PkiMetricsStorage = Pick<
  Storage,
  'certificates' | 'issuers' | 'owners' | 'teams' | 'jobs' | 'notifications' | 'healthChecks' | 'discovered'
>;

export interface PkiMetricsOptions {
  storage: PkiMetricsStorage;
  clock: Clock;
  logger: Logger;
  /**
   * How long one snapshot of the storage is served before a scrape refreshes it (the refresh
   * runs beside the scrape, which answers the previous snapshot). 0: every scrape reads storage.
   */
  cacheMs: number;
  /**
   * Per-certificate expiry series only while the inventory holds at most this many
   * certificates (Archived ones not counted); 0 switches them off. Above it the counts by
   * status and by expiry window still answer "how many expire within 7 days".
   */
  certificateSeriesLimit: number;
}

/** Windows of `certwright_certificates_expiring`, as the `within` label names them. */
const EXPIRY_WINDOWS = [
  { within: '1d', ms: 86_400_000 },
  { within: '7d', ms: 7 * 86_400_000 },
  { within: '30d', ms: 30 * 86_400_000 },
] as const;
/** Counts above this are the planner's estimate (docs/operations/observability.md). */
const EXACT_COUNT_LIMIT = 1_000_000;
const PAGE = 500;

interface CertificateSeries {
  id: string;
  name: string;
  issuer: string;
  owner: string;
  team: string;
  status: string;
  expiresAt: number;
}

interface Snapshot {
  takenAt: number;
  durationSeconds: number;
  certificatesByStatus: Record<string, number>;
  expiring: Record<string, number>;
  jobsByStatus: Record<string, number>;
  notificationsByStatus: Record<string, number>;
  endpointsByHealth: Record<string, number>;
  discoveredByStatus: Record<string, number>;
  /** null when the inventory is larger than the limit (or the limit is 0). */
  certificates: CertificateSeries[] | null;
}

/**
 * Gauges read from storage at scrape time through one cached snapshot, so every instance on
 * one database reports the same truth and a scrape costs a few counting queries however large
 * the inventory (docs/operations/observability.md lists every series and its labels).
 * They carry no `worker` label: in cluster mode every worker reports the same values and the
 * aggregate keeps one of them (`aggregator: 'first'`).
 */
export function registerPkiMetrics(registry: Registry, options: PkiMetricsOptions): void {
  let current: Snapshot | undefined;
  let refreshing: Promise<Snapshot | undefined> | undefined;
  let failed = false;

  const refresh = (): Promise<Snapshot | undefined> => {
    refreshing ??= takeSnapshot(options)
      .then((snapshot) => {
        current = snapshot;
        failed = false;
        return snapshot;
      })
      .catch((error: unknown) => {
        failed = true;
        // The cause goes to the log without a stack: a database outage would repeat it per scrape.
        options.logger.warn(
          { err_message: error instanceof Error ? error.message : String(error) },
          'metrics: reading the storage snapshot failed; serving the previous one',
        );
        return current;
      })
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };

  /** The snapshot a scrape answers with: fresh when none is cached or caching is off. */
  const snapshot = async (): Promise<Snapshot | undefined> => {
    const age = current ? options.clock.now().getTime() - current.takenAt : Number.POSITIVE_INFINITY;
    if (!current || options.cacheMs === 0) return refresh();
    if (age >= options.cacheMs) void refresh();
    return current;
  };

  // One scrape collects every gauge below; they share the snapshot of that scrape.
  let scrape: Promise<Snapshot | undefined> | undefined;
  const shared = () => {
    scrape ??= snapshot().finally(() => {
      setImmediate(() => {
        scrape = undefined;
      });
    });
    return scrape;
  };

  const gauge = (
    name: string,
    help: string,
    labelNames: string[],
    fill: (g: Gauge, s: Snapshot) => void,
  ): void => {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      aggregator: 'first',
      async collect() {
        const s = await shared();
        this.reset();
        if (s) fill(this, s);
      },
    });
  };
  const byLabel = (label: string, field: keyof Snapshot) => (g: Gauge, s: Snapshot) => {
    for (const [value, count] of Object.entries(s[field] as Record<string, number>)) {
      g.set({ [label]: value }, count);
    }
  };

  gauge(
    'certwright_certificates',
    'Managed certificates by status',
    ['status'],
    byLabel('status', 'certificatesByStatus'),
  );
  gauge(
    'certwright_certificates_expiring',
    'Managed certificates (not revoked or archived) whose current version expires within the window',
    ['within'],
    byLabel('within', 'expiring'),
  );
  gauge(
    'certwright_certificate_expiration_timestamp_seconds',
    'Expiry (not_after, Unix seconds) of each managed certificate’s current version; absent above SVC_METRICS_CERTIFICATE_SERIES_LIMIT',
    ['id', 'name', 'issuer', 'owner', 'team', 'status'],
    (g, s) => {
      for (const c of s.certificates ?? []) {
        g.set(
          { id: c.id, name: c.name, issuer: c.issuer, owner: c.owner, team: c.team, status: c.status },
          c.expiresAt,
        );
      }
    },
  );
  gauge(
    'certwright_certificate_series_enabled',
    '1 while per-certificate expiry series are reported, 0 when the inventory is above the limit',
    [],
    (g, s) => g.set(s.certificates ? 1 : 0),
  );
  gauge('certwright_jobs', 'Jobs by status', ['status'], byLabel('status', 'jobsByStatus'));
  gauge(
    'certwright_notifications',
    'Notifications by delivery status',
    ['status'],
    byLabel('status', 'notificationsByStatus'),
  );
  gauge(
    'certwright_endpoints',
    'TLS endpoints under health checks by health',
    ['health'],
    byLabel('health', 'endpointsByHealth'),
  );
  gauge(
    'certwright_discovered_certificates',
    'Discovered certificates by triage status',
    ['status'],
    byLabel('status', 'discoveredByStatus'),
  );
  gauge(
    'certwright_metrics_snapshot_age_seconds',
    'Age of the storage snapshot the PKI gauges report',
    [],
    (g, s) => g.set((options.clock.now().getTime() - s.takenAt) / 1000),
  );
  gauge(
    'certwright_metrics_snapshot_duration_seconds',
    'Time the last storage snapshot took to read',
    [],
    (g, s) => g.set(s.durationSeconds),
  );
  new Gauge({
    name: 'certwright_metrics_snapshot_ok',
    help: '1 when the last read of the storage snapshot succeeded',
    registers: [registry],
    aggregator: 'min',
    async collect() {
      await shared();
      this.set(failed ? 0 : 1);
    },
  });
}

async function takeSnapshot(options: PkiMetricsOptions): Promise<Snapshot> {
  const started = performance.now();
  const { storage } = options;
  const now = options.clock.now();
  const live = { notStatus: ['Revoked', 'Archived'] as ManagedCertificate['status'][] };
  const [
    certificatesByStatus,
    expiring,
    jobsByStatus,
    notificationsByStatus,
    endpointsByHealth,
    discoveredByStatus,
  ] = await Promise.all([
    storage.certificates.countByStatus(),
    storage.certificates.countEach(
      EXPIRY_WINDOWS.map((w) => ({
        ...live,
        expiresAfter: now,
        expiresBefore: new Date(now.getTime() + w.ms),
      })),
      { exactLimit: EXACT_COUNT_LIMIT },
    ),
    storage.jobs.countByStatus(),
    storage.notifications.countByStatus(),
    storage.healthChecks.countByStatus(),
    storage.discovered.countByStatus(),
  ]);
  const inventory = Object.entries(certificatesByStatus)
    .filter(([status]) => status !== 'Archived')
    .reduce((sum, [, count]) => sum + count, 0);
  const certificates =
    options.certificateSeriesLimit > 0 && inventory <= options.certificateSeriesLimit
      ? await certificateSeries(storage)
      : null;
  return {
    takenAt: now.getTime(),
    durationSeconds: (performance.now() - started) / 1000,
    certificatesByStatus,
    expiring: Object.fromEntries(EXPIRY_WINDOWS.map((w, i) => [w.within, expiring[i]?.total ?? 0])),
    jobsByStatus,
    notificationsByStatus,
    endpointsByHealth,
    discoveredByStatus,
    certificates,
  };
}

/** Every certificate with a current version, with its issuer's, owner's and team's names. */
async function certificateSeries(storage: PkiMetricsStorage): Promise<CertificateSeries[]> {
  const [issuers, owners, teams] = await Promise.all([
    names((page) => storage.issuers.list({ page, perPage: PAGE })),
    names((page) => storage.owners.list({ page, perPage: PAGE })),
    names((page) => storage.teams.list({ page, perPage: PAGE })),
  ]);
  const out: CertificateSeries[] = [];
  let after: { value: string | Date | null; id: string } | undefined;
  for (;;) {
    const page = await storage.certificates.list({
      notStatus: ['Archived'],
      sort: 'name',
      order: 'asc',
      perPage: PAGE,
      ...(after ? { after } : {}),
    });
    for (const c of page.items) {
      if (!c.expires_at) continue;
      out.push({
        id: c.id,
        name: c.name,
        issuer: issuers.get(c.issuer_id) ?? c.issuer_id,
        owner: owners.get(c.owner_id) ?? c.owner_id,
        team: teams.get(c.team_id) ?? c.team_id,
        status: c.status,
        expiresAt: Math.floor(c.expires_at.getTime() / 1000),
      });
    }
    if (!page.next) return out;
    after = page.next;
  }
}

async function names(
  list: (page: number) => Promise<{ items: { id: string; name: string }[]; total: number }>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let page = 1; ; page += 1) {
    const { items, total } = await list(page);
    for (const item of items) out.set(item.id, item.name);
    if (items.length === 0 || out.size >= total) return out;
  }
}
