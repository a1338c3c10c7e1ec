import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Actor, AuditService, ServiceDeps, Storage } from '@certwright/core';
import {
  ACME_ACCOUNT_STATUSES,
  type AcmeAccount,
  type AcmeEabKey,
  configEvent,
  fail,
  idSchema,
  invalidReference,
  isCertwrightError,
  notFound,
  type Paged,
  type PublicJwk,
  pageQuerySchema,
  parseInput,
  RevisionedCache,
} from '@certwright/core';
import { decodeBase64Url, parsePublicJwk } from '@certwright/core/pki';
import { z } from 'zod';
import type { AcmeAccountAuthority, NewAccountRequest } from '../wire/authority.js';

/**
 * ACME accounts (RFC 8555 §7.3) and their external-account-binding keys (§7.3.4). The
 * protocol layer (`@certwright/protocols/acme`) verifies JWS signatures and nonces; this
 * service owns the rules about accounts themselves: contacts, terms, bindings, status and the
 * key rollover. docs/protocols/acme.md describes them on the wire.
 */

/** At most this many contact URIs per account. */
export const ACME_MAX_CONTACTS = 8;
/** Longest contact URI (`mailto:` plus an RFC 5321 path of at most 254 octets). */
export const ACME_MAX_CONTACT_LENGTH = 261;

// One address, no display name, no hfields (`?subject=`), no second address after a comma.
const MAILBOX =
  /^mailto:([A-Za-z0-9.!#$%&'*+/=^_`{|}~-]{1,64})@([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)$/;

/**
 * What is wrong with an account contact: `unsupported` for any scheme but `mailto:` (RFC 8555
 * §7.3: unsupportedContact), `invalid` for a mailto URI that is not one plain address
 * (invalidContact), null when it is fine.
 */
export function acmeContactIssue(uri: string): 'unsupported' | 'invalid' | null {
  if (!/^mailto:/i.test(uri)) return 'unsupported';
  if (uri.length > ACME_MAX_CONTACT_LENGTH || !MAILBOX.test(uri)) return 'invalid';
  return null;
}

const contactSchema = z
  .array(
    z.string().superRefine((uri, ctx) => {
      const issue = acmeContactIssue(uri);
      if (issue === 'unsupported')
        ctx.addIssue({ code: 'custom', message: 'only mailto: contacts are supported' });
      if (issue === 'invalid')
        ctx.addIssue({ code: 'custom', message: 'must be mailto: with one plain address' });
    }),
  )
  .max(ACME_MAX_CONTACTS);

const EAB_ALGORITHMS = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' } as const;

/** The new-account request as the endpoint hands it over ({@link NewAccountRequest}). */
export const acmeAccountCreateSchema = z.object({
  profileId: idSchema,
  jwk: z.record(z.string(), z.unknown()),
  contact: contactSchema.default([]),
  termsAgreed: z.boolean().default(false),
  /** RFC 8555 §7.3.4: the inner JWS, already parsed by the protocol layer. */
  externalAccountBinding: z
    .object({
      keyId: z.string().min(1).max(256),
      alg: z.enum(['HS256', 'HS384', 'HS512']),
      protected: z.string().max(16_384),
      payload: z.string().max(16_384),
      signature: z.string().max(1024),
    })
    .optional(),
  /** The client's address, for the per-address account limit of the profile. */
  clientAddress: z.string().max(64).optional(),
});

export const acmeAccountUpdateSchema = z.object({ contact: contactSchema });

export const acmeKeyChangeSchema = z.object({
  /** The thumbprint the client says the account has now (the inner payload's `oldKey`). */
  oldThumbprint: z.string().min(1).max(128),
  jwk: z.record(z.string(), z.unknown()),
});

export const eabKeyCreateSchema = z.object({
  profile_id: idSchema,
  name: z.string().trim().min(1).max(255),
});
export type EabKeyCreate = z.input<typeof eabKeyCreateSchema>;
export const eabKeyListSchema = pageQuerySchema.extend({ profile_id: idSchema.optional() });
export type EabKeyListQuery = z.input<typeof eabKeyListSchema>;
export const acmeAccountListSchema = pageQuerySchema.extend({
  profile_id: idSchema.optional(),
  status: z.enum(ACME_ACCOUNT_STATUSES).optional(),
});
export type AcmeAccountListQuery = z.input<typeof acmeAccountListSchema>;

/** What an administrator sees beside an account: how much it has ordered and been issued. */
export interface AcmeAccountActivity {
  /** Every order the account placed, whatever its status. */
  orders: number;
  /** Orders that issued a certificate (status `valid`): one certificate each. */
  certificates: number;
}

/** A new EAB key with its secret: the only time the secret is shown. */
export interface CreatedEabKey {
  key: AcmeEabKey;
  /** The HMAC key, base64url: what a client passes as `--eab-hmac-key`. */
  hmac_key: string;
}

const HOUR_MS = 60 * 60 * 1000;
const EAB_KEY_BYTES = 32;

/** Who acts for an account in the audit trail: no user, the account's key. */
const accountActor = (accountId: string): Actor => ({ type: 'anonymous', id: `acme:${accountId}` });

export const DEFAULT_ACME_ACCOUNT_CACHE_MS = 1000;

export interface AcmeAccountOptions {
  /**
   * How long an account read by `kid` is reused (default 1000 ms; 0: never). A change through
   * this service (contacts, deactivation, key rollover) is seen at once; one made by another
   * instance within this time.
   */
  accountCacheMs?: number;
}

/** Accounts and EAB keys: what the account endpoints call, and the admin routes' reads. */
export class AcmeAccountService implements AcmeAccountAuthority {
  readonly #random: (size: number) => Uint8Array;
  /** Every JWS-signed request names its account by `kid` (docs/protocols/acme.md, "Performance"). */
  readonly #byKid: RevisionedCache<AcmeAccount | null>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    options: AcmeAccountOptions = {},
  ) {
    const random = deps.random;
    this.#random = random ? (size) => random.bytes(size) : randomBytes;
    // Accounts that do not exist are not remembered.
    this.#byKid = new RevisionedCache<AcmeAccount | null>({
      ttlMs: options.accountCacheMs ?? DEFAULT_ACME_ACCOUNT_CACHE_MS,
      revision: () => this.#revision,
      max: 4096,
      keep: (account) => account !== null,
    });
  }

  #revision = 0;

  /**
   * Grows after every change of an existing account through this service (contacts,
   * deactivation, key rollover) has committed or failed: a cache of account reads in this
   * process (the ACME handler's, by `kid`) that remembers the revision it read at knows
   * whether an account changed since.
   */
  get revision(): number {
    return this.#revision;
  }

  async #changing<T>(change: () => Promise<T>): Promise<T> {
    this.#revision++;
    try {
      return await change();
    } finally {
      this.#revision++;
    }
  }

  /** The account a request's `kid` names, or null; reused within the cache's time to live. */
  account(id: string): Promise<AcmeAccount | null> {
    return this.#byKid.get(id, () => this.deps.storage.acmeAccounts.get(id));
  }

  /** The account, or `not_found`. */
  async get(id: string): Promise<AcmeAccount> {
    const account = await this.deps.storage.acmeAccounts.get(id);
    if (!account) throw notFound('ACME account', id);
    return account;
  }

  /** Accounts, newest first, narrowed by profile and status. */
  async list(query: AcmeAccountListQuery = {}): Promise<Paged<AcmeAccount>> {
    const q = parseInput(acmeAccountListSchema, query);
    const result = await this.deps.storage.acmeAccounts.list({
      page: q.page,
      perPage: q.per_page,
      ...(q.profile_id ? { profile_id: q.profile_id } : {}),
      ...(q.status ? { status: q.status } : {}),
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  /** Two counted one-row pages on the orders' account index; `not_found` for an unknown account. */
  async activity(id: string): Promise<AcmeAccountActivity> {
    await this.get(id);
    const orders = this.deps.storage.acmeOrders;
    const [all, issued] = await Promise.all([
      orders.listIdsForAccount(id, { page: 1, perPage: 1 }),
      orders.list({ account_id: id, status: 'valid', page: 1, perPage: 1 }),
    ]);
    return { orders: all.total, certificates: issued.total };
  }

  /** The account a key (RFC 7638 thumbprint) opened on a profile, or null. */
  accountByKey(profileId: string, thumbprint: string): Promise<AcmeAccount | null> {
    return this.deps.storage.acmeAccounts.getByThumbprint(profileId, thumbprint);
  }

  /**
   * Opens an account for a key. The profile's rules apply: agreement to its terms when it has
   * any, an external account binding made with one of its EAB keys when it requires one, and
   * its per-address limit of new accounts. An EAB key binds exactly one account: the binding
   * is stored in the transaction that creates the account, so a key used twice fails the
   * second time (`unauthenticated`) and that account is never created. A key that already has
   * an account on the profile is `duplicate`, with `extra.account_id`.
   */
  async createAccount(input: NewAccountRequest): Promise<AcmeAccount> {
    const data = parseInput(acmeAccountCreateSchema, input);
    const key = parsePublicJwk(data.jwk);
    const profile = await this.deps.storage.profiles.get(data.profileId);
    if (!profile)
      throw invalidReference([{ field: 'profileId', message: `profile '${data.profileId}' does not exist` }]);
    if (!profile.acme.enabled) throw fail('not_permitted', `profile '${profile.id}' does not serve ACME`);
    if (profile.acme.terms_of_service_url && !data.termsAgreed) {
      throw fail('invalid_input', 'the terms of service must be agreed to (termsOfServiceAgreed)', {
        fields: [{ field: 'termsAgreed', message: 'must be true' }],
      });
    }
    const binding = data.externalAccountBinding;
    if (profile.acme.eab_required && !binding) {
      throw fail('not_permitted', 'this profile requires an external account binding');
    }
    const existing = await this.accountByKey(profile.id, key.thumbprint);
    if (existing) throw this.#taken(existing);
    const limit = profile.acme.rate_limits.accounts_per_ip_per_hour;
    if (limit !== null && data.clientAddress && this.deps.ephemeral) {
      const hit = await this.deps.ephemeral.slidingWindowHit(
        `acme:new-account:${profile.id}:${data.clientAddress}`,
        HOUR_MS,
        limit,
      );
      if (!hit.allowed) {
        throw fail('rate_limited', `at most ${limit} new accounts per hour from one address`, {
          extra: { retry_after_seconds: Math.ceil(hit.retryAfterMs / 1000) },
        });
      }
    }
    return this.deps.storage.transaction(async (tx) => {
      const account = await tx.acmeAccounts
        .create({
          profile_id: profile.id,
          status: 'valid',
          jwk: key.jwk,
          jwk_thumbprint: key.thumbprint,
          contact: data.contact,
          terms_agreed: data.termsAgreed,
          eab_key_id: binding?.keyId ?? null,
          created_ip: data.clientAddress ?? null,
        })
        .catch(async (error) => {
          // Another request opened an account for the same key meanwhile.
          if (isCertwrightError(error) && error.reason === 'duplicate') {
            const winner = await this.accountByKey(profile.id, key.thumbprint);
            if (winner) throw this.#taken(winner);
          }
          throw error;
        });
      if (binding) await this.#bind(tx, profile.id, binding, key.thumbprint, account.id);
      await this.audit.record(
        accountActor(account.id),
        {
          action: 'acme_account_created',
          category: 'auth',
          resource_type: 'acme_account',
          resource_id: account.id,
          details: {
            profile_id: profile.id,
            eab_key_id: account.eab_key_id,
            contacts: account.contact.length,
          },
        },
        tx,
      );
      return account;
    });
  }

  /** Replaces the account's contacts (RFC 8555 §7.3.2); only a valid account can. */
  async updateAccount(id: string, input: z.input<typeof acmeAccountUpdateSchema>): Promise<AcmeAccount> {
    const data = parseInput(acmeAccountUpdateSchema, input);
    return this.#changing(() =>
      this.deps.storage.transaction(async (tx) => {
        const account = await tx.acmeAccounts.lockForUpdate(id);
        if (account.status !== 'valid') throw fail('gone', `the account is ${account.status}`);
        return tx.acmeAccounts.update(id, { contact: data.contact });
      }),
    );
  }

  /**
   * valid → deactivated (RFC 8555 §7.3.6). Final: the key can sign nothing afterwards, and
   * a new account for it is refused. Its pending orders become invalid and their pending
   * authorizations deactivated in the same transaction. Deactivating a deactivated account
   * changes nothing. `by` is who the audit trail names: the account's own key unless an
   * administrator deactivates it through the REST API.
   */
  async deactivateAccount(id: string, by: Actor = accountActor(id)): Promise<AcmeAccount> {
    return this.#changing(() => this.#deactivate(id, by));
  }

  async #deactivate(id: string, by: Actor): Promise<AcmeAccount> {
    return this.deps.storage.transaction(async (tx) => {
      const account = await tx.acmeAccounts.lockForUpdate(id);
      if (account.status === 'deactivated') return account;
      if (account.status !== 'valid') throw fail('gone', `the account is ${account.status}`);
      const updated = await tx.acmeAccounts.update(id, { status: 'deactivated' });
      // RFC 8555 §7.3.6: what the account had in progress ends with it. Orders before
      // authorizations, the lock order every ACME writer keeps; a validation that is still
      // running finds its authorization no longer pending and leaves it alone.
      const orders = await tx.acmeOrders.invalidatePendingOfAccount(id);
      const authorizations = await tx.acmeAuthorizations.deactivatePendingOfAccount(id);
      await this.audit.record(
        by,
        {
          action: 'acme_account_deactivated',
          category: 'auth',
          resource_type: 'acme_account',
          resource_id: id,
          details: { pending_orders_invalidated: orders, pending_authorizations_deactivated: authorizations },
        },
        tx,
      );
      return updated;
    });
  }

  /**
   * Key rollover (RFC 8555 §7.3.5), atomic under the account's row lock: `conflict` when the
   * account's key is no longer `oldThumbprint` (a concurrent rollover won), `duplicate` with
   * `extra.account_id` when the new key already belongs to an account of the profile.
   */
  async changeAccountKey(id: string, input: z.input<typeof acmeKeyChangeSchema>): Promise<AcmeAccount> {
    const data = parseInput(acmeKeyChangeSchema, input);
    const key = parsePublicJwk(data.jwk);
    return this.#changing(() => this.#changeKey(id, key, data.oldThumbprint));
  }

  async #changeKey(
    id: string,
    key: ReturnType<typeof parsePublicJwk>,
    oldThumbprint: string,
  ): Promise<AcmeAccount> {
    return this.deps.storage.transaction(async (tx) => {
      const account = await tx.acmeAccounts.lockForUpdate(id);
      if (account.status !== 'valid') throw fail('gone', `the account is ${account.status}`);
      if (account.jwk_thumbprint !== oldThumbprint) {
        throw fail('conflict', 'the account key changed meanwhile; oldKey is not the current key');
      }
      const holder = await tx.acmeAccounts.getByThumbprint(account.profile_id, key.thumbprint);
      if (holder) throw this.#taken(holder);
      const updated = await tx.acmeAccounts
        .update(id, { jwk: key.jwk, jwk_thumbprint: key.thumbprint })
        .catch(async (error) => {
          if (isCertwrightError(error) && error.reason === 'duplicate') {
            const winner = await this.accountByKey(account.profile_id, key.thumbprint);
            if (winner) throw this.#taken(winner);
          }
          throw error;
        });
      await this.audit.record(
        accountActor(id),
        {
          action: 'acme_account_key_changed',
          category: 'auth',
          resource_type: 'acme_account',
          resource_id: id,
          details: { old_thumbprint: account.jwk_thumbprint, new_thumbprint: key.thumbprint },
        },
        tx,
      );
      return updated;
    });
  }

  /** Ids of the account's orders, newest first. */
  async accountOrderIds(
    id: string,
    page: number,
    perPage: number,
  ): Promise<{ ids: string[]; total: number }> {
    const result = await this.deps.storage.acmeOrders.listIdsForAccount(id, { page, perPage });
    return { ids: result.items, total: result.total };
  }

  // ---- external account binding keys (admin) -----------------------------------------------

  /** Creates an EAB key for a profile; the returned `hmac_key` is never retrievable again. */
  async createEabKey(actor: Actor, input: EabKeyCreate): Promise<CreatedEabKey> {
    const data = parseInput(eabKeyCreateSchema, input);
    const secret = this.#random(EAB_KEY_BYTES);
    return this.deps.storage.transaction(async (tx) => {
      if (!(await tx.profiles.get(data.profile_id))) {
        throw invalidReference([
          { field: 'profile_id', message: `profile '${data.profile_id}' does not exist` },
        ]);
      }
      const key = await tx.acmeEabKeys.create({
        profile_id: data.profile_id,
        name: data.name,
        hmac_key: secret,
      });
      await this.audit.record(actor, configEvent('acme_eab_key_created', 'acme_eab_key', key.id, data), tx);
      return { key, hmac_key: Buffer.from(secret).toString('base64url') };
    });
  }

  async getEabKey(id: string): Promise<AcmeEabKey> {
    const key = await this.deps.storage.acmeEabKeys.get(id);
    if (!key) throw notFound('EAB key', id);
    return key;
  }

  async listEabKeys(query: EabKeyListQuery = {}): Promise<Paged<AcmeEabKey>> {
    const q = parseInput(eabKeyListSchema, query);
    const result = await this.deps.storage.acmeEabKeys.list({
      page: q.page,
      perPage: q.per_page,
      ...(q.profile_id ? { profile_id: q.profile_id } : {}),
    });
    return { data: result.items, total: result.total, page: q.page, per_page: q.per_page };
  }

  /** Deletes a key: no new account can bind it; an account it already bound stays. */
  async deleteEabKey(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.acmeEabKeys.get(id))) throw notFound('EAB key', id);
      await tx.acmeEabKeys.delete(id);
      await this.audit.record(actor, configEvent('acme_eab_key_deleted', 'acme_eab_key', id), tx);
    });
  }

  /**
   * Verifies an external account binding and binds its key to the new account. Every failure
   * is the same `unauthenticated` sentence, so a caller learns nothing about which keys exist.
   */
  async #bind(
    tx: Storage,
    profileId: string,
    binding: NonNullable<z.output<typeof acmeAccountCreateSchema>['externalAccountBinding']>,
    thumbprint: string,
    accountId: string,
  ): Promise<void> {
    const refused = () => fail('unauthenticated', 'the external account binding does not verify');
    // The MAC'd payload must be this account's key (RFC 8555 §7.3.4).
    let payloadJwk: PublicJwk;
    try {
      const text = decodeBase64Url(binding.payload, 'the binding payload', 16_384).toString('utf8');
      payloadJwk = parsePublicJwk(JSON.parse(text)).jwk;
    } catch {
      throw fail('malformed', 'the external account binding payload is not a public JWK');
    }
    if (parsePublicJwk(payloadJwk).thumbprint !== thumbprint) {
      throw fail('malformed', 'the external account binding is for another key');
    }
    const stored = await tx.acmeEabKeys.getWithKey(binding.keyId);
    if (!stored || stored.key.profile_id !== profileId || stored.key.account_id !== null) throw refused();
    const expected = createHmac(EAB_ALGORITHMS[binding.alg], stored.hmac_key)
      .update(`${binding.protected}.${binding.payload}`, 'ascii')
      .digest();
    let given: Buffer;
    try {
      given = decodeBase64Url(binding.signature, 'the binding signature', 64);
    } catch {
      throw refused();
    }
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
    if (!(await tx.acmeEabKeys.bind(binding.keyId, accountId, this.deps.clock.now()))) throw refused();
  }

  #taken(account: AcmeAccount) {
    return fail('duplicate', 'an account exists for this key', { extra: { account_id: account.id } });
  }
}
