import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { type Issuer, issuerConfigSchema, issuerTypeSchema } from '../domain/issuer.js';
import { CertwrightError, notFound } from '../errors.js';
import type { IssuerConnectorRegistry } from '../issuers/connector.js';
import { defaultIssuerConnectors } from '../issuers/index.js';
import type { AuditService } from './audit.js';
import type { Actor, ServiceDeps } from './context.js';
import { type Paged, parseInput, stillReferenced } from './input.js';
import { issuedCertificateOf } from './issued-certificates.js';
import { configEvent } from './owners.js';
import { pageQuerySchema } from './paging.js';
import { nameTaken } from './teams.js';

export { issuedCertificateOf } from './issued-certificates.js';

export const issuerCreateSchema = z.object({
  name: z.string().trim().min(1).max(255),
  type: issuerTypeSchema,
  /** Connector settings, credentials included: sealed at rest, write-only over the API. */
  config: issuerConfigSchema.optional(),
  enabled: z.boolean().optional(),
});
export const issuerUpdateSchema = issuerCreateSchema.partial();
export const issuerListSchema = pageQuerySchema.extend({
  type: issuerTypeSchema.optional(),
  enabled: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .or(z.boolean())
    .optional(),
});
export type IssuerCreate = z.input<typeof issuerCreateSchema>;
export type IssuerUpdate = z.input<typeof issuerUpdateSchema>;
export type IssuerListQuery = z.input<typeof issuerListSchema>;

/**
 * Issuers (certificate authorities reached through a connector). The record returned never
 * carries `config`: it may hold credentials, so only the issuing pipeline reads it, through
 * `storage.issuers.getWithConfig`.
 *
 * An issuer's sealed config holds two kinds of keys: settings the caller gives (connector
 * options, credentials, CA material to import) and state the service writes itself (a Local
 * CA's `ca` and `ocsp_responder`, the `crl_number`). Which keys are state is declared by the
 * connector registry (`managedConfigKeys`); this service keeps them across every update and
 * refuses them as input, so a caller can neither drop nor forge them.
 *
 * Some settings only matter while the connector creates its state (a Local CA's
 * `key_algorithm`, `common_name` and the PEMs of a CA to import): the registry declares them
 * (`creationOnlyConfigKeys`, with `isProvisioned`), and once the state exists an update that
 * changes one is refused with a 400 instead of being stored and silently ignored.
 */
export class IssuerService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly connectors: IssuerConnectorRegistry = defaultIssuerConnectors(),
  ) {}

  async create(input: IssuerCreate, actor: Actor): Promise<Issuer> {
    const data = parseInput(issuerCreateSchema, input);
    this.#refuseManagedKeys(data.type, data.config);
    return this.deps.storage.transaction(async (tx) => {
      const issuer = await tx.issuers
        .create({
          name: data.name,
          type: data.type,
          config: data.config ?? {},
          enabled: data.enabled ?? true,
        })
        .catch(nameTaken(data.name, 'issuer'));
      // Config values are secrets: the audit trail records which keys changed, never values.
      await this.audit.record(actor, configEvent('issuer_created', 'issuer', issuer.id, redact(data)), tx);
      return issuer;
    });
  }

  async get(id: string): Promise<Issuer> {
    const issuer = await this.deps.storage.issuers.get(id);
    if (!issuer) throw notFound('issuer', id);
    return issuer;
  }

  async list(query: IssuerListQuery = {}): Promise<Paged<Issuer>> {
    const q = parseInput(issuerListSchema, query);
    const result = await this.deps.storage.issuers.list({
      page: q.page,
      perPage: q.per_page,
      type: q.type,
      enabled: q.enabled,
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  /**
   * `config`, when given, replaces every caller-set key (so a setting can be removed by leaving
   * it out); the managed state of the stored issuer (CA material, responder, CRL number) is
   * carried over unchanged. Without `config` the stored config is left as it is.
   */
  async update(id: string, input: IssuerUpdate, actor: Actor): Promise<Issuer> {
    const data = parseInput(issuerUpdateSchema, input);
    return this.deps.storage.transaction(async (tx) => {
      // The row lock before any read (not_found for a missing issuer), so a connector's
      // concurrent persistConfig (responder re-issue) cannot slip between our read and our write.
      await tx.issuers.lockForUpdate(id);
      let patch = data;
      if (data.config !== undefined) {
        const current = await tx.issuers.getWithConfig(id);
        if (!current) throw notFound('issuer', id);
        const type = data.type ?? current.type;
        this.#refuseManagedKeys(type, data.config);
        this.#refuseCreationOnlyKeys(type, current.config, data.config);
        // Keys managed under the stored type are kept even when the type changes: dropping CA
        // material would orphan every certificate it issued.
        const kept: Record<string, unknown> = {};
        for (const key of this.connectors.managedConfigKeys(current.type)) {
          if (key in current.config) kept[key] = current.config[key];
        }
        const next = { ...data.config, ...kept };
        // Inside the transaction (and with `tx`): the check reads issued certificates, and the
        // row lock keeps the config it judged the one that is replaced.
        await this.connectors.checkConfigUpdate(type, {
          issuerId: id,
          current: current.config,
          next,
          issuedCertificate: () => issuedCertificateOf(tx, id),
        });
        patch = { ...data, config: next };
      } else if (data.type !== undefined) {
        // A type change alone must not turn caller-set keys into the new type's state (an
        // ACME setting named `ca` would otherwise pass for Local CA material).
        const current = await tx.issuers.getWithConfig(id);
        if (current && current.type !== data.type) {
          const stateBefore = new Set(this.connectors.managedConfigKeys(current.type));
          const settings = Object.fromEntries(
            Object.entries(current.config).filter(([key]) => !stateBefore.has(key)),
          );
          this.#refuseManagedKeys(data.type, settings);
        }
      }
      const issuer = await tx.issuers.update(id, patch).catch(nameTaken(data.name, 'issuer'));
      await this.audit.record(actor, configEvent('issuer_updated', 'issuer', id, redact(data)), tx);
      return issuer;
    });
  }

  /** Managed keys are state the service writes; as input they are a 400 naming the key. */
  #refuseManagedKeys(type: Issuer['type'], config: Record<string, unknown> | undefined): void {
    if (!config) return;
    const managed = this.connectors.managedConfigKeys(type).filter((key) => key in config);
    if (managed.length === 0) return;
    throw new CertwrightError(
      'validation_failed',
      `config ${managed.map((k) => `'${k}'`).join(', ')} ${managed.length === 1 ? 'is' : 'are'} managed by the service for ${type} issuers and cannot be set (import a CA with certificate_pem and private_key_pem)`,
      {
        fields: managed.map((key) => ({
          field: `config.${key}`,
          message: 'managed by the service; cannot be set',
        })),
      },
    );
  }

  /**
   * Creation-only settings on an issuer whose state already exists are a 400 naming each key:
   * they would be stored and ignored (and an imported private key would sit unused in the
   * config). A value equal to the stored one changes nothing and passes, so a caller re-sending
   * the settings it created the issuer with is not refused; leaving one out is fine too.
   */
  #refuseCreationOnlyKeys(
    type: Issuer['type'],
    current: Record<string, unknown>,
    config: Record<string, unknown>,
  ): void {
    const refused = this.connectors
      .creationOnlyConfigKeys(type, current)
      .filter((key) => key in config && !isDeepStrictEqual(config[key], current[key]));
    if (refused.length === 0) return;
    throw new CertwrightError(
      'validation_failed',
      `config ${refused.map((k) => `'${k}'`).join(', ')} only ${refused.length === 1 ? 'applies' : 'apply'} when the issuer's CA is created, and this ${type} issuer already has its CA; create a new issuer for a different CA`,
      {
        fields: refused.map((key) => ({
          field: `config.${key}`,
          message: 'only applies when the CA is created; this issuer already has one',
        })),
      },
    );
  }

  async delete(id: string, actor: Actor): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.issuers.get(id))) throw notFound('issuer', id);
      const refused = stillReferenced('issuer', id, await tx.issuers.references(id));
      if (refused) throw refused;
      await tx.issuers.delete(id);
      await this.audit.record(actor, configEvent('issuer_deleted', 'issuer', id), tx);
    });
  }
}

function redact(data: { config?: Record<string, unknown> } & Record<string, unknown>) {
  const { config, ...rest } = data;
  return config === undefined ? rest : { ...rest, config_keys: Object.keys(config).sort() };
}
