import type { CertificateStatus } from '../domain/certificate.js';
import type { CertificateFilter } from '../ports/storage.js';
import { EXACT_TOTAL_LIMIT } from './certificates.js';
import type { ServiceDeps } from './context.js';

const DAY = 86_400_000;
const WEEK = 7 * DAY;

/** Certificates that still expire: what the timeline and "renewals due" count. */
export const LIVE_STATUSES: readonly CertificateStatus[] = [
  'Active',
  'Expiring',
  'RenewalInProgress',
  'Failed',
];
/** Weekly bins of the expiry timeline: 13 weeks cover the next 91 days. */
export const TIMELINE_WEEKS = 13;
/** How many issuers and teams the dashboard counts one by one; the rest are only numbered. */
export const DASHBOARD_GROUP_LIMIT = 12;

/** One count and whether it is the database's estimate (above EXACT_TOTAL_LIMIT). */
export interface Counted {
  total: number;
  estimated: boolean;
}

export interface ExpiryBin extends Counted {
  /** The bin holds latest versions with not_after in [starts_at, ends_at). */
  starts_at: Date;
  ends_at: Date;
}

export interface GroupCount extends Counted {
  id: string;
  name: string;
}

/**
 * The dashboard's figures beyond the status counts. Every count is the count of one filter the
 * certificate and job lists accept, so a figure and the list it links to always agree.
 */
export interface DashboardOverview {
  /** Live certificates by the week their latest version expires, from now. */
  expiry_timeline: ExpiryBin[];
  /** All certificates of each issuer, largest first; `issuers_more` issuers are not counted. */
  by_issuer: GroupCount[];
  issuers_more: number;
  /** All certificates of each team, largest first; `teams_more` teams are not counted. */
  by_team: GroupCount[];
  teams_more: number;
  renewals: {
    /** Live certificates whose latest version expires within the next 7 days. */
    due_this_week: Counted;
    /** Renewal jobs finished in the last 7 days. */
    completed_last_7_days: number;
    failed_last_7_days: number;
    /** completed / (completed + failed); null when none finished. */
    success_rate: number | null;
  };
  /** The instant the figures were taken at (bins and windows start here). */
  as_of: Date;
}

/** Dashboard figures, each a bounded count (exact up to EXACT_TOTAL_LIMIT, estimated above). */
export class DashboardService {
  constructor(private readonly deps: ServiceDeps) {}

  async overview(): Promise<DashboardOverview> {
    const { storage, clock } = this.deps;
    const now = clock.now();
    const [issuers, teams] = await Promise.all([
      storage.issuers.list({ page: 1, perPage: DASHBOARD_GROUP_LIMIT }),
      storage.teams.list({ page: 1, perPage: DASHBOARD_GROUP_LIMIT }),
    ]);
    const bins = Array.from({ length: TIMELINE_WEEKS }, (_, i) => ({
      starts_at: new Date(now.getTime() + i * WEEK),
      ends_at: new Date(now.getTime() + (i + 1) * WEEK),
    }));
    const filters: CertificateFilter[] = [
      ...bins.map((b) => ({
        status: [...LIVE_STATUSES],
        expiresAfter: b.starts_at,
        expiresBefore: b.ends_at,
      })),
      ...issuers.items.map((issuer) => ({ issuer_id: issuer.id })),
      ...teams.items.map((team) => ({ team_id: team.id })),
      { status: [...LIVE_STATUSES], expiresAfter: now, expiresBefore: new Date(now.getTime() + WEEK) },
    ];
    const since = new Date(now.getTime() - WEEK);
    const [counts, completed, failed] = await Promise.all([
      storage.certificates.countEach(filters, { exactLimit: EXACT_TOTAL_LIMIT }),
      storage.jobs.list({ type: 'Renewal', status: 'Completed', completed_after: since, perPage: 1 }),
      storage.jobs.list({ type: 'Renewal', status: 'Failed', completed_after: since, perPage: 1 }),
    ]);
    const at = (i: number): Counted => counts[i] ?? { total: 0, estimated: false };
    const grouped = (records: { id: string; name: string }[], offset: number): GroupCount[] =>
      records
        .map((r, i) => ({ id: r.id, name: r.name, ...at(offset + i) }))
        .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
    const finished = completed.total + failed.total;
    return {
      expiry_timeline: bins.map((b, i) => ({ ...b, ...at(i) })),
      by_issuer: grouped(issuers.items, bins.length),
      issuers_more: Math.max(0, issuers.total - issuers.items.length),
      by_team: grouped(teams.items, bins.length + issuers.items.length),
      teams_more: Math.max(0, teams.total - teams.items.length),
      renewals: {
        due_this_week: at(filters.length - 1),
        completed_last_7_days: completed.total,
        failed_last_7_days: failed.total,
        success_rate: finished === 0 ? null : completed.total / finished,
      },
      as_of: now,
    };
  }
}
