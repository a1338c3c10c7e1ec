/**
 * URL filters of the lists the dashboard links to (jobs, notifications, health checks, policy
 * violations): only known keys and values survive, as in the inventory's parseInventorySearch.
 */
import type { Paths } from './api';

type Query<P extends keyof Paths> = NonNullable<NonNullable<Paths[P]['get']>['parameters']['query']>;
type Element<T> = T extends readonly (infer E)[] ? E : T;
type JobStatus = Element<NonNullable<Query<'/api/v1/jobs'>['status']>>;
type JobType = NonNullable<Query<'/api/v1/jobs'>['type']>;
type NotificationStatus = Element<NonNullable<Query<'/api/v1/notifications'>['status']>>;
type HealthStatus = NonNullable<Query<'/api/v1/health-checks'>['status']>;
type Severity = NonNullable<Query<'/api/v1/violations'>['severity']>;

/**
 * Every value of `T`, each once: the browser bundle does not import core, so the lists are written
 * here and checked against the OpenAPI document's enums — a value added or removed there fails the
 * type check until it is here too.
 */
type AllOf<T extends string, L extends readonly T[]> = [Exclude<T, L[number]>] extends [never] ? L : never;
const allOf =
  <T extends string>() =>
  <const L extends readonly T[]>(values: AllOf<T, L>): L =>
    values;

export const JOB_STATUSES = allOf<JobStatus>()([
  'Pending',
  'AwaitingCSR',
  'Running',
  'Completed',
  'Failed',
  'Cancelled',
]);
export const JOB_TYPES = allOf<JobType>()(['Issuance', 'Renewal', 'Deployment', 'Validation']);
export const NOTIFICATION_STATUSES = allOf<NotificationStatus>()([
  'pending',
  'sent',
  'failed',
  'dead',
  'read',
  'undeliverable',
]);
export const HEALTH_STATUSES = allOf<HealthStatus>()(['healthy', 'degraded', 'down', 'cert_mismatch']);
export const SEVERITIES = allOf<Severity>()(['Critical', 'Error', 'Warning']);

/** `value` when it is one of `allowed`, else undefined. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return (allowed as readonly unknown[]).includes(value) ? (value as T) : undefined;
}

/** An RFC 3339 instant from the URL, normalised to ISO; anything else is dropped. */
export function instant(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

/** Drops undefined entries, so a URL only carries the filters that are set. */
function defined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export interface JobSearch {
  status?: (typeof JOB_STATUSES)[number];
  type?: (typeof JOB_TYPES)[number];
  completed_after?: string;
}
export const parseJobSearch = (s: Record<string, unknown>): JobSearch =>
  defined({
    status: oneOf(s.status, JOB_STATUSES),
    type: oneOf(s.type, JOB_TYPES),
    completed_after: instant(s.completed_after),
  });

export interface NotificationSearch {
  status?: (typeof NOTIFICATION_STATUSES)[number];
}
export const parseNotificationSearch = (s: Record<string, unknown>): NotificationSearch =>
  defined({ status: oneOf(s.status, NOTIFICATION_STATUSES) });

export interface HealthCheckSearch {
  status?: (typeof HEALTH_STATUSES)[number];
}
export const parseHealthCheckSearch = (s: Record<string, unknown>): HealthCheckSearch =>
  defined({ status: oneOf(s.status, HEALTH_STATUSES) });

export interface ViolationSearch {
  severity?: (typeof SEVERITIES)[number];
}
export const parseViolationSearch = (s: Record<string, unknown>): ViolationSearch =>
  defined({ severity: oneOf(s.severity, SEVERITIES) });
