import {
  type AcmeAccount,
  type CertificateProfile,
  MemoryEphemeralStore,
  RevisionedCache,
  type Services,
} from '@certwright/core';
import {
  type AcmeAuthority,
  type AcmeServerSettings,
  acmeMount as acmeProtocolMount,
} from '@certwright/protocols/acme';
import type { ProtocolMount } from '@certwright/protocols/mount';
import { acmeOrderAuthority } from './acme-orders.js';
import type { MountContext } from './table.js';

/** ACME server settings of the composed handler (the server reads `SVC_ACME_SERVER_*`). */
export interface AcmeMountOptions {
  /** The profile the shorthand `/acme/…` routes serve; default `prof-default`. */
  defaultProfileId?: string;
  /** The external origin clients use; default each request's own origin. */
  baseUrl?: string;
  settings?: Partial<AcmeServerSettings>;
  /**
   * How long a profile lookup of the ACME routes is reused (default 1000 ms; 0: never). A
   * change through this process's services is seen at once; one made by another instance
   * within this time.
   */
  profileCacheMs?: number;
  /**
   * How long an account read by `kid` is reused (default 1000 ms; 0: never). A change through
   * this process's services (contacts, deactivation, key rollover) is seen at once; one made by
   * another instance within this time.
   */
  accountCacheMs?: number;
}

export const DEFAULT_ACME_PROFILE_CACHE_MS = 1000;
export const DEFAULT_ACME_ACCOUNT_CACHE_MS = 1000;

export const DEFAULT_ACME_PROFILE_ID = 'prof-default';

const servesAcme = (profile: CertificateProfile | null): CertificateProfile | null =>
  profile?.acme.enabled ? profile : null;

/** Adapts the domain services to what the ACME endpoints call. */
export function acmeAuthority(
  services: Services,
  defaultProfileId: string,
  profileCacheMs = DEFAULT_ACME_PROFILE_CACHE_MS,
  accountCacheMs = DEFAULT_ACME_ACCOUNT_CACHE_MS,
): AcmeAuthority {
  const { storage } = services.deps;
  const accounts = services.acme.accounts;
  // Every ACME request names its profile, and every JWS-signed one its account (by `kid`):
  // read from storage at most once per time to live (docs/protocols/acme.md, "Performance").
  const profiles = new RevisionedCache<CertificateProfile | null>({
    ttlMs: profileCacheMs,
    revision: () => services.profiles.revision,
  });
  // Accounts that do not exist are not remembered.
  const byKid = new RevisionedCache<AcmeAccount | null>({
    ttlMs: accountCacheMs,
    revision: () => accounts.revision,
    max: 4096,
    keep: (account) => account !== null,
  });
  return {
    profileForPath: (segment) =>
      profiles.get(`path:${segment}`, async () => {
        const byPath = await storage.profiles.findByPathId('acme', segment);
        if (byPath) return servesAcme(byPath);
        // A profile without a path id is addressed by its id.
        const byId = await storage.profiles.get(segment);
        return byId && byId.acme.path_id === null ? servesAcme(byId) : null;
      }),
    defaultProfile: () =>
      profiles.get('default', async () => servesAcme(await storage.profiles.get(defaultProfileId))),
    account: (id) => byKid.get(id, () => storage.acmeAccounts.get(id)),
    accountByKey: (profileId, thumbprint) => accounts.findByKey(profileId, thumbprint),
    createAccount: (input) =>
      accounts.create({
        profile_id: input.profileId,
        jwk: input.jwk,
        contact: input.contact,
        terms_agreed: input.termsAgreed,
        created_ip: input.clientAddress ?? null,
        ...(input.externalAccountBinding
          ? {
              external_account_binding: {
                key_id: input.externalAccountBinding.keyId,
                alg: input.externalAccountBinding.alg,
                protected: input.externalAccountBinding.protected,
                payload: input.externalAccountBinding.payload,
                signature: input.externalAccountBinding.signature,
              },
            }
          : {}),
      }),
    updateAccount: (id, patch) => accounts.update(id, patch),
    deactivateAccount: (id) => accounts.deactivate(id),
    changeAccountKey: (id, change) =>
      accounts.changeKey(id, { old_thumbprint: change.oldThumbprint, jwk: change.jwk }),
    accountOrderIds: (id, page, perPage) => accounts.orderIds(id, page, perPage),
    ...acmeOrderAuthority(services),
  };
}

/** The `/acme` mount over the domain services, with the server's ACME settings. */
export function acmeMount({ services, logger, acme = {}, clientAddress }: MountContext): ProtocolMount {
  const ephemeral = services.deps.ephemeral ?? new MemoryEphemeralStore({ clock: services.deps.clock });
  return acmeProtocolMount({
    authority: acmeAuthority(
      services,
      acme.defaultProfileId ?? DEFAULT_ACME_PROFILE_ID,
      acme.profileCacheMs ?? DEFAULT_ACME_PROFILE_CACHE_MS,
      acme.accountCacheMs ?? DEFAULT_ACME_ACCOUNT_CACHE_MS,
    ),
    ephemeral,
    ...(acme.baseUrl ? { baseUrl: acme.baseUrl } : {}),
    ...(acme.settings ? { settings: acme.settings } : {}),
    ...(clientAddress ? { clientAddress } : {}),
    now: () => services.deps.clock.now(),
    logger,
  });
}
