import { z } from 'zod';
import { describeChain } from '../discovery/observe.js';
import { isLocalhostName, parseRange, refusedCategory, type ScanAddressPolicy } from '../discovery/ranges.js';
import {
  type EndpointObservation,
  planScan,
  type ScannerOptions,
  scanEndpoints,
} from '../discovery/scanner.js';
import { SENTINEL_AGENT_IDS } from '../domain/agent.js';
import {
  type DiscoveredCertificate,
  type DiscoveredStatus,
  type DiscoveryScan,
  discoveredStatusSchema,
  type ScanError,
  type ScanTarget,
} from '../domain/discovery.js';
import { DEFAULT_RENEWAL_POLICY_ID } from '../domain/renewal-policy.js';
import { CertwrightError, fail, invalidState, isCertwrightError, publicMessage } from '../errors.js';
import type { OutboundClient } from '../net/client.js';
import { normalizeHost } from '../net/host.js';
import { type CertificateDetails, describeCertificate, describeEach } from '../pki/certificate-details.js';
import { pemDecode } from '../pki/pem.js';
import type { SightingInput } from '../ports/discovery-storage.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { booleanFlag, definedFields, invalidReference, parseInput } from './input.js';
import { type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

const recordId = z.string().min(1).max(128);
const port = z.number().int().min(1, 'must be from 1 to 65535').max(65535, 'must be from 1 to 65535');
const hostName = z.string().trim().min(1).max(253);

const targetFields = {
  name: z.string().trim().min(1).max(255),
  cidrs: z
    .array(z.string().max(64))
    .max(64)
    .describe('CIDR ranges or addresses; at most 4096 addresses in all'),
  hosts: z.array(hostName).max(256).describe('DNS names, resolved at scan time and sent as SNI'),
  ports: z.array(port).min(1).max(64).describe('TCP ports, 1–65535'),
  sni_names: z.array(hostName).max(16).describe('extra SNI names tried on every address of the ranges'),
  interval_seconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .describe('seconds between scheduled scans; 0 (default) scans only on demand; otherwise at least 300'),
  enabled: z.boolean(),
};

export const scanTargetCreateSchema = z.object({
  name: targetFields.name,
  cidrs: targetFields.cidrs.optional(),
  hosts: targetFields.hosts.optional(),
  ports: targetFields.ports,
  sni_names: targetFields.sni_names.optional(),
  interval_seconds: targetFields.interval_seconds.optional(),
  enabled: targetFields.enabled.optional(),
});
export const scanTargetUpdateSchema = z.object({
  name: targetFields.name.optional(),
  cidrs: targetFields.cidrs.optional(),
  hosts: targetFields.hosts.optional(),
  ports: targetFields.ports.optional(),
  sni_names: targetFields.sni_names.optional(),
  interval_seconds: targetFields.interval_seconds.optional(),
  enabled: targetFields.enabled.optional(),
});
export const scanTargetListSchema = pageQuerySchema.extend({ enabled: booleanFlag.optional() });
export const discoveryScanListSchema = pageQuerySchema.extend({
  target_id: recordId.optional(),
  status: z.enum(['running', 'completed', 'failed']).optional(),
  source: z.string().min(1).max(128).optional(),
});
const isoDate = z.union([z.date(), z.iso.datetime({ offset: true }).transform((t) => new Date(t))]);
export const discoveredListSchema = pageQuerySchema.extend({
  status: discoveredStatusSchema.optional(),
  managed: booleanFlag.optional().describe('true: claimed or recognised; false: not managed'),
  issuer: z.string().min(1).max(255).optional().describe('substring of the issuer name'),
  expires_within_days: z.coerce.number<number | string>().int().min(0).max(3650).optional(),
  expires_before: isoDate.optional(),
  expires_after: isoDate.optional(),
  seen_address: z.string().min(1).max(1024).optional().describe('address (or host path) it was seen at'),
  seen_port: z.coerce.number<number | string>().int().min(1).max(65535).optional(),
  source: z.string().min(1).max(128).optional(),
  scan_id: recordId.optional(),
  search: z.string().min(1).max(255).optional(),
});
export const claimSchema = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .optional()
    .describe('default: the subject common name or first SAN'),
  issuer_id: recordId,
  owner_id: recordId,
  team_id: recordId,
  renewal_policy_id: recordId.optional(),
  environment: z.string().max(64).optional(),
});
export const hostReportSchema = z.object({
  certificates: z
    .array(
      z.object({
        path: z.string().min(1).max(1024),
        pem: z
          .string()
          .min(1)
          .max(256 * 1024)
          .describe('the certificate (and chain) as PEM'),
      }),
    )
    .max(1000),
});

export type ScanTargetInput = z.input<typeof scanTargetCreateSchema>;
export type ScanTargetUpdate = z.input<typeof scanTargetUpdateSchema>;
export type DiscoveredListQuery = z.input<typeof discoveredListSchema>;
export type ClaimInput = z.input<typeof claimSchema>;
export type HostReport = z.input<typeof hostReportSchema>;

export interface DiscoverySummary {
  total: number;
  by_status: Record<DiscoveredStatus, number>;
  by_issuer: { issuer: string; count: number }[];
  expiring: { days_7: number; days_30: number; days_90: number };
  expired: number;
  unmanaged: number;
  scans: { running: number; last_completed_at: Date | null };
}

export interface DiscoveryOptions {
  /** The scanner's guarded client (operator-configured guard); required to run scans. */
  client?: OutboundClient;
  concurrency?: number;
  timeoutMs?: number;
  /** Test rigs only: lets targets name 127.0.0.0/8 and ::1. */
  policy?: ScanAddressPolicy;
}

/** Errors kept on a scan record; the count covers all of them. */
const MAX_SCAN_ERRORS = 100;
const MIN_SCHEDULED_INTERVAL_S = 300;

/**
 * Network scan targets, scan runs and the discovered-certificate inventory
 * (docs/api/discovery.md).
 */
export class DiscoveryService {
  /** Scans running in this process, by target: a second request joins the first. */
  readonly #running = new Map<string, Promise<{ scan: DiscoveryScan; done: Promise<DiscoveryScan> }>>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly options: DiscoveryOptions = {},
  ) {}

  #validateTarget(data: { cidrs?: string[]; hosts?: string[]; interval_seconds?: number }) {
    const cidrs = (data.cidrs ?? []).map((text, i) => parseRange(text, `cidrs.${i}`, this.options.policy));
    const total = cidrs.reduce((n, r) => n + r.size, 0);
    if (total > 4096) {
      throw fail('invalid_input', `cidrs cover ${total} addresses; a scan target covers at most 4096`, {
        fields: [{ field: 'cidrs', message: `cover ${total} addresses; at most 4096` }],
      });
    }
    const hosts = (data.hosts ?? []).map((h, i) => {
      const n = normalizeHost(h, `hosts.${i}`);
      // Refused at create, as for cidrs: a scan would refuse the address every time anyway.
      const refused =
        n.kind === 'ip'
          ? refusedCategory(n.text, this.options.policy)
          : isLocalhostName(n.name) && !this.options.policy?.allowLoopback
            ? 'loopback'
            : null;
      if (refused) {
        const message = `'${h.slice(0, 64)}' lies in ${refused.replace('_', '-')} space, which is never scanned`;
        throw fail('invalid_input', `hosts.${i}: ${message}`, { fields: [{ field: `hosts.${i}`, message }] });
      }
      return n.kind === 'ip' ? n.text : n.name;
    });
    if (
      data.interval_seconds !== undefined &&
      data.interval_seconds > 0 &&
      data.interval_seconds < MIN_SCHEDULED_INTERVAL_S
    ) {
      throw fail('invalid_input', `interval_seconds must be 0 or at least ${MIN_SCHEDULED_INTERVAL_S}`, {
        fields: [{ field: 'interval_seconds', message: `must be 0 or at least ${MIN_SCHEDULED_INTERVAL_S}` }],
      });
    }
    return { cidrs: cidrs.map((r) => r.text), hosts };
  }

  async createTarget(actor: Actor, input: ScanTargetInput): Promise<ScanTarget> {
    const data = parseInput(scanTargetCreateSchema, input);
    const { cidrs, hosts } = this.#validateTarget(data);
    if (cidrs.length === 0 && hosts.length === 0) {
      throw fail('invalid_input', 'a scan target needs cidrs or hosts', {
        fields: [{ field: 'cidrs', message: 'give at least one range or host' }],
      });
    }
    const interval = data.interval_seconds ?? 0;
    return this.deps.storage.transaction(async (tx) => {
      const target = await tx.scanTargets.create({
        name: data.name,
        cidrs,
        hosts,
        ports: [...new Set(data.ports)],
        sni_names: data.sni_names ?? [],
        interval_seconds: interval,
        enabled: data.enabled ?? true,
        next_scan_at: interval > 0 ? this.deps.clock.now() : null,
      });
      await this.#audit(actor, 'scan_target_created', target.id, { cidrs, hosts, ports: target.ports }, tx);
      return target;
    });
  }

  getTarget(id: string): Promise<ScanTarget> {
    return this.deps.storage.scanTargets.require(id);
  }

  async listTargets(query: z.input<typeof scanTargetListSchema> = {}): Promise<Paged<ScanTarget>> {
    const { page, per_page, ...filter } = parseInput(scanTargetListSchema, query);
    const window = { page, per_page };
    return paged(
      await this.deps.storage.scanTargets.list({ ...storagePage(window), ...definedFields(filter) }),
      window,
    );
  }

  async updateTarget(actor: Actor, id: string, input: ScanTargetUpdate): Promise<ScanTarget> {
    const data = parseInput(scanTargetUpdateSchema, input);
    const checked = this.#validateTarget(data);
    return this.deps.storage.transaction(async (tx) => {
      const before = await tx.scanTargets.require(id);
      const cidrs = data.cidrs === undefined ? before.cidrs : checked.cidrs;
      const hosts = data.hosts === undefined ? before.hosts : checked.hosts;
      if (cidrs.length === 0 && hosts.length === 0) {
        throw fail('invalid_input', 'a scan target needs cidrs or hosts', {
          fields: [{ field: 'cidrs', message: 'give at least one range or host' }],
        });
      }
      const interval = data.interval_seconds ?? before.interval_seconds;
      const target = await tx.scanTargets.update(id, {
        ...definedFields({ name: data.name, sni_names: data.sni_names, enabled: data.enabled }),
        ...(data.ports ? { ports: [...new Set(data.ports)] } : {}),
        cidrs,
        hosts,
        interval_seconds: interval,
        ...(data.interval_seconds !== undefined
          ? { next_scan_at: interval > 0 ? this.deps.clock.now() : null }
          : {}),
      });
      await this.#audit(actor, 'scan_target_updated', id, { fields: Object.keys(definedFields(data)) }, tx);
      return target;
    });
  }

  async deleteTarget(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      await tx.scanTargets.delete(id);
      await this.#audit(actor, 'scan_target_deleted', id, {}, tx);
    });
  }

  /**
   * Starts a scan of a target as the `server-scanner` source and returns the running scan at
   * once; `done` settles with the finished record. One scan per target at a time in this
   * process: asking again while one runs returns the running one.
   */
  startScan(actor: Actor, targetId: string): Promise<{ scan: DiscoveryScan; done: Promise<DiscoveryScan> }> {
    // Registered before the first await, so two requests at once cannot both start one.
    const running = this.#running.get(targetId);
    if (running) return running;
    const pending = this.#start(actor, targetId);
    this.#running.set(targetId, pending);
    pending.catch(() => this.#running.delete(targetId));
    return pending;
  }

  async #start(
    actor: Actor,
    targetId: string,
  ): Promise<{ scan: DiscoveryScan; done: Promise<DiscoveryScan> }> {
    const target = await this.deps.storage.scanTargets.require(targetId);
    const client = this.options.client;
    if (!client) throw fail('unavailable', 'network scanning is not configured in this process');
    const now = this.deps.clock.now();
    const scan = await this.deps.storage.transaction(async (tx) => {
      const created = await tx.discoveryScans.create({
        target_id: target.id,
        source: 'server-scanner',
        started_at: now,
      });
      await tx.scanTargets.update(target.id, {
        last_scan_at: now,
        next_scan_at:
          target.interval_seconds > 0 ? new Date(now.getTime() + target.interval_seconds * 1000) : null,
      });
      await this.#audit(actor, 'discovery_scan_started', created.id, { target_id: target.id }, tx);
      return created;
    });
    // Released as the scan settles, before anybody awaiting `done` resumes.
    const done = this.#run(scan, target, client).finally(() => this.#running.delete(targetId));
    return { scan, done };
  }

  /** Runs a scan to its end (library use and the scheduler). */
  async scanNow(actor: Actor, targetId: string): Promise<DiscoveryScan> {
    return (await this.startScan(actor, targetId)).done;
  }

  async #run(scan: DiscoveryScan, target: ScanTarget, client: OutboundClient): Promise<DiscoveryScan> {
    const storage = this.deps.storage;
    const options: ScannerOptions = {
      client,
      ...definedFields({
        concurrency: this.options.concurrency,
        timeoutMs: this.options.timeoutMs,
        policy: this.options.policy,
      }),
    };
    const counts = {
      endpoints_total: 0,
      endpoints_tls: 0,
      certificates_found: 0,
      certificates_new: 0,
      errors_count: 0,
    };
    const errors: ScanError[] = [];
    const fingerprints = new Set<string>();
    const addError = (o: Extract<EndpointObservation, { ok: false }>) => {
      counts.errors_count += 1;
      if (errors.length < MAX_SCAN_ERRORS) {
        errors.push({
          address: o.endpoint.address,
          port: o.endpoint.port,
          sni: o.endpoint.sni,
          reason: o.reason,
          message: o.message,
        });
      }
    };
    try {
      const plan = await planScan(target, options);
      counts.endpoints_total = plan.endpoints.length + plan.errors.length;
      for (const e of plan.errors) if (!e.ok) addError(e);
      await scanEndpoints(plan.endpoints, options, async (o) => {
        if (!o.ok) {
          // A closed port is the normal answer of most addresses of a range: counted, not listed.
          if (o.reason === 'connection_failed') return;
          addError(o);
          return;
        }
        counts.endpoints_tls += 1;
        try {
          const created = await this.#record(o.chain, {
            source: 'server-scanner',
            scan_id: scan.id,
            address: o.endpoint.address,
            port: o.endpoint.port,
            sni: o.endpoint.sni,
            path: null,
            seen_at: this.deps.clock.now(),
          });
          if (!fingerprints.has(created.fingerprint)) {
            fingerprints.add(created.fingerprint);
            counts.certificates_found += 1;
            if (created.created) counts.certificates_new += 1;
          }
        } catch (error) {
          addError({
            endpoint: o.endpoint,
            ok: false,
            reason: isCertwrightError(error) ? error.reason : 'internal',
            message: publicMessage(error),
          });
        }
      });
      return await storage.discoveryScans.update(scan.id, {
        ...counts,
        errors,
        status: 'completed',
        finished_at: this.deps.clock.now(),
      });
    } catch (error) {
      this.deps.logger.error({ err: error, scan_id: scan.id }, 'discovery scan failed');
      errors.push({
        address: '',
        port: 0,
        sni: null,
        reason: isCertwrightError(error) ? error.reason : 'internal',
        message: publicMessage(error),
      });
      return storage.discoveryScans.update(scan.id, {
        ...counts,
        errors_count: counts.errors_count + 1,
        errors,
        status: 'failed',
        finished_at: this.deps.clock.now(),
      });
    }
  }

  /** Parses a served or reported chain and records one sighting; links it when it is managed. */
  async #record(
    chain: readonly Uint8Array[],
    sighting: SightingInput,
  ): Promise<{ fingerprint: string; created: boolean }> {
    const described = describeChain(chain);
    const managed = await this.deps.storage.discovered.findManagedByFingerprint(described.fingerprint_sha256);
    const { created } = await this.deps.storage.discovered.record(
      described,
      sighting,
      managed?.certificate_id ?? null,
    );
    return { fingerprint: described.fingerprint_sha256, created };
  }

  /**
   * A host discovery report from an agent: certificate files it found in its configured
   * paths. Recorded as a completed scan with the agent as source.
   */
  async reportHostDiscovery(actor: Actor, agentId: string, input: HostReport): Promise<DiscoveryScan> {
    const data = parseInput(hostReportSchema, input);
    const agent = await this.deps.storage.agents.require(agentId);
    if (agent.retired_at) throw invalidState(`agent '${agentId}' is retired`);
    const now = this.deps.clock.now();
    const scan = await this.deps.storage.discoveryScans.create({
      target_id: null,
      source: agent.id,
      started_at: now,
    });
    const counts = {
      endpoints_total: data.certificates.length,
      endpoints_tls: 0,
      certificates_found: 0,
      certificates_new: 0,
      errors_count: 0,
    };
    const errors: ScanError[] = [];
    for (const [i, entry] of data.certificates.entries()) {
      try {
        const chain = pemBlocks(entry.pem, `certificates.${i}.pem`);
        const r = await this.#record(chain, {
          source: agent.id,
          scan_id: scan.id,
          address: null,
          port: null,
          sni: null,
          path: entry.path,
          seen_at: now,
        });
        counts.endpoints_tls += 1;
        counts.certificates_found += 1;
        if (r.created) counts.certificates_new += 1;
      } catch (error) {
        counts.errors_count += 1;
        if (errors.length < MAX_SCAN_ERRORS) {
          errors.push({
            address: entry.path,
            port: 0,
            sni: null,
            reason: isCertwrightError(error) ? error.reason : 'internal',
            message: publicMessage(error),
          });
        }
      }
    }
    const done = await this.deps.storage.discoveryScans.update(scan.id, {
      ...counts,
      errors,
      status: 'completed',
      finished_at: this.deps.clock.now(),
    });
    await this.#audit(actor, 'discovery_report_received', scan.id, { agent_id: agent.id, ...counts });
    return done;
  }

  /** Scans the scheduler finds due, run one after another; returns the finished scans. */
  async runDueScans(actor: Actor, limit = 5): Promise<DiscoveryScan[]> {
    if (!this.options.client) return [];
    const due = await this.deps.storage.scanTargets.due(this.deps.clock.now(), limit);
    const out: DiscoveryScan[] = [];
    for (const target of due) out.push(await this.scanNow(actor, target.id));
    return out;
  }

  /** Scans still running after `maxAgeMs` belong to a scanner that died: marked failed. */
  failStaleScans(maxAgeMs: number): Promise<number> {
    const now = this.deps.clock.now();
    return this.deps.storage.discoveryScans.failStale(new Date(now.getTime() - maxAgeMs), now);
  }

  getScan(id: string): Promise<DiscoveryScan> {
    return this.deps.storage.discoveryScans.require(id);
  }

  async listScans(query: z.input<typeof discoveryScanListSchema> = {}): Promise<Paged<DiscoveryScan>> {
    const { page, per_page, ...filter } = parseInput(discoveryScanListSchema, query);
    const window = { page, per_page };
    return paged(
      await this.deps.storage.discoveryScans.list({ ...storagePage(window), ...definedFields(filter) }),
      window,
    );
  }

  async listCertificates(query: DiscoveredListQuery = {}): Promise<Paged<DiscoveredCertificate>> {
    const { page, per_page, managed, expires_within_days, ...rest } = parseInput(discoveredListSchema, query);
    if (managed !== undefined && rest.status !== undefined && (rest.status === 'managed') !== managed) {
      throw fail('invalid_input', 'status and managed contradict each other', {
        fields: [{ field: 'managed', message: `contradicts status '${rest.status}'` }],
      });
    }
    const window = { page, per_page };
    const now = this.deps.clock.now();
    const filter = {
      ...definedFields(rest),
      ...(managed === true ? { status: 'managed' as const } : {}),
      ...(managed === false && rest.status === undefined ? { status: 'unmanaged' as const } : {}),
      ...(expires_within_days !== undefined
        ? { expires_before: new Date(now.getTime() + expires_within_days * 86_400_000) }
        : {}),
    };
    return paged(await this.deps.storage.discovered.list({ ...storagePage(window), ...filter }), window);
  }

  getCertificate(id: string): Promise<DiscoveredCertificate> {
    return this.deps.storage.discovered.require(id);
  }

  /**
   * A discovered certificate decoded for display, with the chain the endpoint served after it.
   * Both came from outside and pass the bounded reader here again; a chain certificate it
   * refuses is counted, not shown.
   */
  async certificateDetails(
    id: string,
  ): Promise<{ certificate: CertificateDetails; chain: CertificateDetails[]; chain_undecodable: number }> {
    const found = await this.deps.storage.discovered.require(id);
    const { chain, undecodable } = describeEach(found.chain_pem);
    return { certificate: describeCertificate(found.cert_pem), chain, chain_undecodable: undecodable };
  }

  /**
   * Brings a discovered certificate under management: a managed certificate with this
   * certificate as its first version (no private key: the key stays where it was found).
   * A certificate already in the inventory is linked instead of copied.
   */
  async claim(actor: Actor, id: string, input: ClaimInput): Promise<DiscoveredCertificate> {
    const data = parseInput(claimSchema, input);
    const found = await this.deps.storage.discovered.require(id);
    if (found.status === 'managed' && found.certificate_id) return found;
    const existing = await this.deps.storage.discovered.findManagedByFingerprint(found.fingerprint_sha256);
    return this.deps.storage.transaction(async (tx) => {
      let certificateId = existing?.certificate_id;
      if (!certificateId) {
        const refs = [
          ['issuer_id', await tx.issuers.get(data.issuer_id)],
          ['owner_id', await tx.owners.get(data.owner_id)],
          ['team_id', await tx.teams.get(data.team_id)],
          [
            'renewal_policy_id',
            await tx.renewalPolicies.get(data.renewal_policy_id ?? DEFAULT_RENEWAL_POLICY_ID),
          ],
        ] as const;
        const missing = refs
          .filter(([, r]) => !r)
          .map(([field]) => ({ field, message: 'names no existing record' }));
        if (missing.length > 0) throw invalidReference(missing);
        const cn =
          /(?:^|,)CN=([^,]+)/.exec(found.subject)?.[1] ??
          found.sans[0] ??
          found.fingerprint_sha256.slice(0, 16);
        const now = this.deps.clock.now();
        const certificate = await tx.certificates.create({
          name: data.name ?? cn,
          common_name: cn.slice(0, 255),
          sans: found.sans.filter((s) => !s.includes(':')).slice(0, 100),
          status: found.not_after < now ? 'Expired' : 'Active',
          issuer_id: data.issuer_id,
          owner_id: data.owner_id,
          team_id: data.team_id,
          renewal_policy_id: data.renewal_policy_id ?? DEFAULT_RENEWAL_POLICY_ID,
          ...(data.environment === undefined ? {} : { environment: data.environment }),
          metadata: { discovered_id: found.id },
        });
        try {
          await tx.versions.create({
            certificate_id: certificate.id,
            issuer_id: data.issuer_id,
            serial_number: found.serial_number.slice(0, 64),
            fingerprint_sha256: found.fingerprint_sha256,
            key_algorithm: found.key_algorithm,
            key_size: found.key_size,
            subject: found.subject,
            issued_at: found.not_before,
            not_before: found.not_before,
            not_after: found.not_after,
            csr_pem: null,
            cert_pem: found.cert_pem,
            chain_pem: found.chain_pem,
            private_key_pem: null,
          });
        } catch (error) {
          if (error instanceof CertwrightError && error.code === 'conflict') {
            throw fail(
              'invalid_input',
              `issuer '${data.issuer_id}' already has a certificate with serial ${found.serial_number}`,
              {
                fields: [{ field: 'issuer_id', message: 'already holds this serial number' }],
              },
            );
          }
          throw error;
        }
        certificateId = certificate.id;
      }
      const claimed = await tx.discovered.update(id, { status: 'managed', certificate_id: certificateId });
      await this.#audit(actor, 'discovered_certificate_claimed', id, { certificate_id: certificateId }, tx);
      return claimed;
    });
  }

  /** Hides a discovered certificate from the unmanaged lists; later sightings keep it dismissed. */
  async dismiss(actor: Actor, id: string): Promise<DiscoveredCertificate> {
    return this.deps.storage.transaction(async (tx) => {
      const found = await tx.discovered.require(id);
      if (found.status === 'managed') {
        throw invalidState(
          `discovered certificate '${id}' is managed; archive the managed certificate instead`,
        );
      }
      if (found.status === 'dismissed') return found;
      const dismissed = await tx.discovered.update(id, { status: 'dismissed' });
      await this.#audit(actor, 'discovered_certificate_dismissed', id, {}, tx);
      return dismissed;
    });
  }

  async summary(): Promise<DiscoverySummary> {
    const d = this.deps.storage.discovered;
    const now = this.deps.clock.now().getTime();
    const within = (days: number) =>
      d.count({ expires_after: new Date(now), expires_before: new Date(now + days * 86_400_000) });
    const [by_status, by_issuer, days_7, days_30, days_90, expired, running, last] = await Promise.all([
      d.countByStatus(),
      d.countByIssuer(20),
      within(7),
      within(30),
      within(90),
      d.count({ expires_before: new Date(now) }),
      this.deps.storage.discoveryScans.list({ status: 'running', perPage: 1 }),
      this.deps.storage.discoveryScans.list({ status: 'completed', perPage: 1 }),
    ]);
    return {
      total: by_status.unmanaged + by_status.managed + by_status.dismissed,
      by_status,
      by_issuer,
      expiring: { days_7, days_30, days_90 },
      expired,
      unmanaged: by_status.unmanaged,
      scans: { running: running.total, last_completed_at: last.items[0]?.finished_at ?? null },
    };
  }

  #audit(
    actor: Actor,
    action: string,
    resourceId: string,
    details: Record<string, unknown>,
    tx = this.deps.storage,
  ) {
    return this.audit.record(
      actor,
      { action, category: 'config', resource_type: 'discovery', resource_id: resourceId, details },
      tx,
    );
  }
}

/** The sentinel sources; agents report as themselves. */
export const DISCOVERY_SENTINELS = SENTINEL_AGENT_IDS;

function pemBlocks(text: string, field: string): Uint8Array[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) {
    throw fail('invalid_input', `${field}: no PEM certificate found`, {
      fields: [{ field, message: 'holds no PEM certificate' }],
    });
  }
  return blocks.slice(0, 10).map((b) => pemDecode(b, 'CERTIFICATE', { maxChars: 200_000 }));
}
