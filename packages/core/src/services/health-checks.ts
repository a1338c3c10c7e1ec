import { z } from 'zod';
import { type CheckVerdict, nextHealth } from '../discovery/health.js';
import { describeChain } from '../discovery/observe.js';
import { refusedCategory, type ScanAddressPolicy } from '../discovery/ranges.js';
import {
  type HealthCheck,
  type HealthCheckResult,
  type HealthStatus,
  healthStatusSchema,
  type ObservedCertificate,
} from '../domain/discovery.js';
import { fail, isCertwrightError, publicMessage } from '../errors.js';
import type { OutboundClient } from '../net/client.js';
import { normalizeHost } from '../net/host.js';
import type { Storage } from '../ports/storage.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { booleanFlag, definedFields, invalidReference, parseInput } from './input.js';
import type { NotificationService } from './notifications.js';
import { type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

const recordId = z.string().min(1).max(128);
const fingerprint = z
  .string()
  .trim()
  .transform((s) => s.replace(/:/g, '').toLowerCase())
  .pipe(z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 fingerprint (64 hex digits, colons allowed)'));
const fields = {
  name: z.string().trim().min(1).max(255),
  host: z.string().trim().min(1).max(253),
  port: z.number().int().min(1, 'must be from 1 to 65535').max(65535, 'must be from 1 to 65535'),
  sni: z.string().trim().min(1).max(253).nullable(),
  expected_fingerprint: fingerprint.nullable(),
  certificate_id: recordId.nullable(),
  interval_seconds: z.number().int().min(30).max(86_400).describe('seconds between checks; default 300'),
  deployment_window_seconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .describe('how long after a renewal the previous version still counts as served correctly; default 3600'),
  enabled: z.boolean(),
};
export const healthCheckCreateSchema = z.object({
  name: fields.name,
  host: fields.host,
  port: fields.port,
  sni: fields.sni.optional(),
  expected_fingerprint: fields.expected_fingerprint.optional(),
  certificate_id: fields.certificate_id.optional(),
  interval_seconds: fields.interval_seconds.optional(),
  deployment_window_seconds: fields.deployment_window_seconds.optional(),
  enabled: fields.enabled.optional(),
});
export const healthCheckUpdateSchema = healthCheckCreateSchema.partial();
export const healthCheckListSchema = pageQuerySchema.extend({
  status: healthStatusSchema.optional(),
  enabled: booleanFlag.optional(),
  certificate_id: recordId.optional(),
  search: z.string().min(1).max(255).optional(),
});
export type HealthCheckInput = z.input<typeof healthCheckCreateSchema>;
export type HealthCheckUpdate = z.input<typeof healthCheckUpdateSchema>;

export interface HealthSummary {
  total: number;
  by_status: Record<HealthStatus, number>;
  /** Checks not healthy and not acknowledged. */
  unacknowledged: number;
}

export interface HealthTickReport {
  checked: number;
  transitions: number;
  errors: number;
}

export interface HealthCheckOptions {
  /** Guarded client with an operator-configured guard; required to run checks. */
  client?: OutboundClient;
  /** Per-check connect and handshake timeout; default 10 s. */
  timeoutMs?: number;
  /** Checks run at once in a tick; default 64. */
  concurrency?: number;
  /** Results kept for this long; default 30 days. */
  retentionMs?: number;
  /** Test rigs only: admits 127.0.0.0/8 and ::1. */
  policy?: ScanAddressPolicy;
}

const DEFAULT_INTERVAL_S = 300;
const DEFAULT_WINDOW_S = 3600;

/** What a handshake showed, before it is judged. */
interface Probe {
  ok: boolean;
  observed: ObservedCertificate | null;
  tls_version: string | null;
  cipher: string | null;
  handshake_ms: number | null;
  error: string | null;
}

/**
 * TLS endpoint health: checks, their scheduler pass, history and alerts
 * (docs/api/discovery.md).
 */
export class HealthCheckService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly notifications: NotificationService,
    private readonly options: HealthCheckOptions = {},
  ) {}

  #checkHost(host: string): string {
    const n = normalizeHost(host, 'host');
    if (n.kind === 'ip') {
      const refused = refusedCategory(n.text, this.options.policy);
      if (refused) {
        const message = `is ${refused.replace('_', '-')} space, which health checks never reach`;
        throw fail('address_refused', `host ${message}`, { fields: [{ field: 'host', message }] });
      }
      return n.text;
    }
    return n.name;
  }

  async #checkReferences(tx: Storage, certificateId: string | null | undefined) {
    if (!certificateId) return;
    if (!(await tx.certificates.get(certificateId))) {
      throw invalidReference([{ field: 'certificate_id', message: 'names no existing certificate' }]);
    }
  }

  /** Creates a check and runs its first check at once; returns the checked record. */
  async create(actor: Actor, input: HealthCheckInput): Promise<HealthCheck> {
    const data = parseInput(healthCheckCreateSchema, input);
    const host = this.#checkHost(data.host);
    if (!data.expected_fingerprint && !data.certificate_id) {
      throw fail('invalid_input', 'give expected_fingerprint or certificate_id', {
        fields: [{ field: 'expected_fingerprint', message: 'or certificate_id is required' }],
      });
    }
    const enabled = data.enabled ?? true;
    const interval = data.interval_seconds ?? DEFAULT_INTERVAL_S;
    const now = this.deps.clock.now();
    // A check this call runs at once is not due for the scheduler too: a tick between the commit
    // and the first result would otherwise check the endpoint twice.
    const checkedNow = this.options.client !== undefined && enabled;
    const check = await this.deps.storage.transaction(async (tx) => {
      await this.#checkReferences(tx, data.certificate_id);
      const created = await tx.healthChecks.create({
        name: data.name,
        host,
        port: data.port,
        sni: data.sni ?? null,
        expected_fingerprint: data.certificate_id ? null : (data.expected_fingerprint ?? null),
        certificate_id: data.certificate_id ?? null,
        interval_seconds: interval,
        deployment_window_seconds: data.deployment_window_seconds ?? DEFAULT_WINDOW_S,
        enabled,
        next_check_at: checkedNow ? new Date(now.getTime() + interval * 1000) : now,
      });
      await this.#audit(actor, 'health_check_created', created.id, { host, port: data.port }, tx);
      return created;
    });
    if (!checkedNow) return check;
    return this.runCheck(check.id);
  }

  get(id: string): Promise<HealthCheck> {
    return this.deps.storage.healthChecks.require(id);
  }

  async list(query: z.input<typeof healthCheckListSchema> = {}): Promise<Paged<HealthCheck>> {
    const { page, per_page, ...filter } = parseInput(healthCheckListSchema, query);
    const window = { page, per_page };
    return paged(
      await this.deps.storage.healthChecks.list({ ...storagePage(window), ...definedFields(filter) }),
      window,
    );
  }

  async update(actor: Actor, id: string, input: HealthCheckUpdate): Promise<HealthCheck> {
    const data = parseInput(healthCheckUpdateSchema, input);
    const host = data.host === undefined ? undefined : this.#checkHost(data.host);
    return this.deps.storage.transaction(async (tx) => {
      const before = await tx.healthChecks.lockForUpdate(id);
      await this.#checkReferences(tx, data.certificate_id);
      const certificateId = data.certificate_id === undefined ? before.certificate_id : data.certificate_id;
      const expected =
        data.expected_fingerprint === undefined ? before.expected_fingerprint : data.expected_fingerprint;
      if (!certificateId && !expected) {
        throw fail('invalid_input', 'give expected_fingerprint or certificate_id', {
          fields: [{ field: 'expected_fingerprint', message: 'or certificate_id is required' }],
        });
      }
      const updated = await tx.healthChecks.update(id, {
        ...definedFields({
          name: data.name,
          host,
          port: data.port,
          sni: data.sni,
          interval_seconds: data.interval_seconds,
          deployment_window_seconds: data.deployment_window_seconds,
          enabled: data.enabled,
        }),
        certificate_id: certificateId,
        expected_fingerprint: certificateId ? before.expected_fingerprint : expected,
        // A changed endpoint or expectation is checked at the next tick.
        next_check_at: this.deps.clock.now(),
      });
      await this.#audit(actor, 'health_check_updated', id, { fields: Object.keys(definedFields(data)) }, tx);
      return updated;
    });
  }

  async delete(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      await tx.healthChecks.delete(id);
      await this.#audit(actor, 'health_check_deleted', id, {}, tx);
    });
  }

  async history(id: string, query: z.input<typeof pageQuerySchema> = {}): Promise<Paged<HealthCheckResult>> {
    const window = parseInput(pageQuerySchema, query);
    await this.deps.storage.healthChecks.require(id);
    return paged(await this.deps.storage.healthChecks.listResults(id, storagePage(window)), window);
  }

  /** Records that an operator saw the current state; cleared by the next transition. */
  async acknowledge(actor: Actor, id: string): Promise<HealthCheck> {
    return this.deps.storage.transaction(async (tx) => {
      await tx.healthChecks.lockForUpdate(id);
      const acked = await tx.healthChecks.update(id, {
        acknowledged_at: this.deps.clock.now(),
        acknowledged_by: actor.id,
      });
      await this.#audit(actor, 'health_check_acknowledged', id, { status: acked.status }, tx);
      return acked;
    });
  }

  async summary(): Promise<HealthSummary> {
    const by_status = await this.deps.storage.healthChecks.countByStatus();
    const total = Object.values(by_status).reduce((a, b) => a + b, 0);
    const unacknowledged = await this.deps.storage.healthChecks.countUnacknowledged();
    return { total, by_status, unacknowledged };
  }

  /** One handshake; never throws. */
  async #probe(check: HealthCheck): Promise<Probe> {
    const client = this.options.client!;
    try {
      const resolved = await client.guard.resolve(check.host, 'host');
      for (const address of resolved.addresses) {
        const refused = refusedCategory(address, this.options.policy);
        if (refused)
          throw fail(
            'address_refused',
            `'${check.host}' resolves to ${refused.replace('_', '-')} space, which health checks never reach`,
          );
      }
      const result = await client.connectTls({
        host: resolved.addresses[0]!,
        port: check.port,
        servername: check.sni ?? (resolved.literal ? null : resolved.host),
        verify: false,
        timeoutMs: this.options.timeoutMs ?? 10_000,
      });
      const base = {
        tls_version: result.protocol,
        cipher: result.cipher,
        handshake_ms: Math.round((result.timing.connectMs + result.timing.tlsMs) * 100) / 100,
      };
      if (result.peerCertificates.length === 0)
        return { ok: false, observed: null, ...base, error: 'the endpoint sent no certificate' };
      const d = describeChain(result.peerCertificates.slice(0, 1));
      return {
        ok: true,
        observed: {
          fingerprint_sha256: d.fingerprint_sha256,
          subject: d.subject,
          issuer: d.issuer,
          serial_number: d.serial_number,
          not_after: d.not_after,
        },
        ...base,
        error: null,
      };
    } catch (error) {
      return {
        ok: false,
        observed: null,
        tls_version: null,
        cipher: null,
        handshake_ms: null,
        error: isCertwrightError(error) ? `${error.reason}: ${publicMessage(error)}` : publicMessage(error),
      };
    }
  }

  /**
   * The expectation: the current version of the managed certificate when one is named, else
   * the given fingerprint. `grace` lists fingerprints still accepted: earlier versions of the
   * certificate while the current one is younger than the deployment window.
   */
  async #expectation(
    check: HealthCheck,
    now: Date,
  ): Promise<{ expected: string | null; grace: Set<string>; stale: Set<string> }> {
    const grace = new Set<string>();
    const stale = new Set<string>();
    if (!check.certificate_id) return { expected: check.expected_fingerprint, grace, stale };
    const versions = await this.deps.storage.versions.listForCertificate(check.certificate_id, {
      perPage: 20,
    });
    const sorted = [...versions.items].sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
    const current = sorted[0];
    if (!current) return { expected: null, grace, stale };
    const inWindow = now.getTime() - current.created_at.getTime() < check.deployment_window_seconds * 1000;
    for (const older of sorted.slice(1)) (inWindow ? grace : stale).add(older.fingerprint_sha256);
    return { expected: current.fingerprint_sha256, grace, stale };
  }

  /** Checks one endpoint now, records the result and any transition. */
  async runCheck(id: string): Promise<HealthCheck> {
    if (!this.options.client)
      throw fail('unavailable', 'endpoint health checks are not configured in this process');
    const check = await this.deps.storage.healthChecks.require(id);
    const probe = await this.#probe(check);
    const now = this.deps.clock.now();
    const expectation = await this.#expectation(check, now);
    let verdict: CheckVerdict = 'failure';
    let note: string | null = probe.error;
    if (probe.ok && probe.observed) {
      const served = probe.observed.fingerprint_sha256;
      if (!expectation.expected || served === expectation.expected || expectation.grace.has(served))
        verdict = 'match';
      else {
        verdict = 'mismatch';
        note = expectation.stale.has(served)
          ? 'stale deployment: the endpoint still serves a previous version of the certificate after the deployment window'
          : `served certificate ${served} is not the expected ${expectation.expected}`;
      }
    }
    const transition = await this.deps.storage.transaction(async (tx) => {
      const current = await tx.healthChecks.lockForUpdate(id);
      const next = nextHealth(current, verdict);
      const changed = next.status !== current.status;
      const updated = await tx.healthChecks.update(id, {
        ...next,
        last_checked_at: now,
        next_check_at: new Date(now.getTime() + current.interval_seconds * 1000),
        ...(verdict === 'failure' ? { last_failure_at: now } : { last_success_at: now }),
        last_error: note,
        ...(probe.observed ? { observed: probe.observed } : {}),
        handshake_ms: probe.handshake_ms,
        tls_version: probe.tls_version,
        cipher: probe.cipher,
        ...(current.certificate_id ? { expected_fingerprint: expectation.expected } : {}),
        ...(changed ? { status_changed_at: now, acknowledged_at: null, acknowledged_by: null } : {}),
      });
      await tx.healthChecks.addResult({
        check_id: id,
        checked_at: now,
        status: next.status,
        success: verdict !== 'failure',
        fingerprint_sha256: probe.observed?.fingerprint_sha256 ?? null,
        tls_version: probe.tls_version,
        cipher: probe.cipher,
        handshake_ms: probe.handshake_ms,
        error: note,
      });
      if (changed) await this.#alert(tx, current.status, updated);
      return { updated, changed };
    });
    return transition.updated;
  }

  /** One EndpointHealth notification per transition, through the notification pipeline. */
  async #alert(tx: Storage, from: HealthStatus, check: HealthCheck): Promise<void> {
    const certificate = check.certificate_id ? await tx.certificates.get(check.certificate_id) : null;
    const endpoint = `${check.host}:${check.port}${check.sni ? ` (SNI ${check.sni})` : ''}`;
    const subject = `Endpoint ${check.name} is ${check.status}`;
    const lines = [
      `Endpoint: ${endpoint}`,
      `Health check: ${check.id}`,
      `Status: ${from} -> ${check.status}`,
      `Consecutive failures: ${check.consecutive_failures}`,
      ...(check.observed ? [`Served certificate: ${check.observed.fingerprint_sha256}`] : []),
      ...(check.expected_fingerprint ? [`Expected certificate: ${check.expected_fingerprint}`] : []),
      ...(check.last_error ? [`Detail: ${check.last_error}`] : []),
    ];
    // The certificate's owner by email and every webhook; without a certificate there is no
    // owner to email, so the alert goes to the webhooks alone.
    if (certificate) {
      await this.notifications.raiseForCertificate(tx, certificate, 'EndpointHealth', subject, lines);
    } else {
      await this.notifications.raiseForWebhooks(tx, null, 'EndpointHealth', subject, lines);
    }
    await this.audit.record(
      { type: 'system', id: 'system' },
      {
        action: 'endpoint_health_changed',
        category: 'cert_lifecycle',
        resource_type: 'health_check',
        resource_id: check.id,
        details: { from, to: check.status },
      },
      tx,
    );
  }

  /**
   * One scheduler tick: every enabled check that is due, at most `concurrency` at a time, and
   * the retention of the history. Failures of one check never stop the others.
   */
  async tick(limit = 10_000): Promise<HealthTickReport> {
    const report: HealthTickReport = { checked: 0, transitions: 0, errors: 0 };
    if (!this.options.client) return report;
    const now = this.deps.clock.now();
    const due = await this.deps.storage.healthChecks.due(now, limit);
    let next = 0;
    const workers = Math.max(1, Math.min(this.options.concurrency ?? 64, 512));
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (next < due.length) {
          const check = due[next++]!;
          try {
            const after = await this.runCheck(check.id);
            report.checked += 1;
            if (after.status !== check.status) report.transitions += 1;
          } catch (error) {
            report.errors += 1;
            this.deps.logger.error(
              { err: error, health_check_id: check.id },
              'health check could not be recorded',
            );
          }
        }
      }),
    );
    const retention = this.options.retentionMs ?? 30 * 86_400_000;
    await this.deps.storage.healthChecks.pruneResults(new Date(now.getTime() - retention));
    return report;
  }

  #audit(
    actor: Actor,
    action: string,
    resourceId: string,
    details: Record<string, unknown>,
    tx: Storage = this.deps.storage,
  ) {
    return this.audit.record(
      actor,
      { action, category: 'config', resource_type: 'health_check', resource_id: resourceId, details },
      tx,
    );
  }
}
