import {
  isCertwrightError,
  type ScepRaRecord,
  type ScepRaRepository,
  type ScepStorage,
} from '@certwright/core';
import type { Selectable } from 'kysely';
import type { Ctx } from '../context.js';
import type { ScepRaCertificatesTable } from '../schema.js';

/** The RA keys are sealed bound to the profile and to which slot they sit in. */
export const keyContext = (profileId: string, fingerprint: string) =>
  `profile:${profileId}:scep-ra:${fingerprint}`;

function scepRaRepository(ctx: Ctx): ScepRaRepository {
  const read = async (r: Selectable<ScepRaCertificatesTable>): Promise<ScepRaRecord> => ({
    profile_id: r.profile_id,
    issuer_id: r.issuer_id,
    certificate_pem: r.certificate_pem,
    fingerprint_sha256: r.fingerprint_sha256,
    private_key_pem: await ctx.box.open(r.private_key_sealed, keyContext(r.profile_id, r.fingerprint_sha256)),
    not_before: new Date(r.not_before),
    not_after: new Date(r.not_after),
    previous_certificate_pem: r.previous_certificate_pem,
    previous_private_key_pem:
      r.previous_private_key_sealed === null
        ? null
        : await ctx.box.open(r.previous_private_key_sealed, keyContext(r.profile_id, 'previous')),
    updated_at: new Date(r.updated_at),
  });
  const get = async (profileId: string) => {
    const r = await ctx.db
      .selectFrom('scep_ra_certificates')
      .selectAll()
      .where('profile_id', '=', profileId)
      .executeTakeFirst();
    return r ? read(r) : null;
  };
  return {
    get,
    async replace(next, expected) {
      const row = {
        issuer_id: next.issuer_id,
        certificate_pem: next.certificate_pem,
        fingerprint_sha256: next.fingerprint_sha256,
        private_key_sealed: await ctx.box.seal(
          next.private_key_pem,
          keyContext(next.profile_id, next.fingerprint_sha256),
        ),
        not_before: next.not_before,
        not_after: next.not_after,
        previous_certificate_pem: next.previous_certificate_pem,
        previous_private_key_sealed:
          next.previous_private_key_pem === null
            ? null
            : await ctx.box.seal(next.previous_private_key_pem, keyContext(next.profile_id, 'previous')),
        updated_at: ctx.clock.now(),
      };
      if (expected === null) {
        try {
          await ctx.db
            .insertInto('scep_ra_certificates')
            .values({ profile_id: next.profile_id, ...row })
            .execute();
        } catch (error) {
          // Another instance created it first: theirs is the RA.
          if (!isCertwrightError(error) || error.code !== 'conflict' || ctx.inTx) throw error;
        }
      } else {
        await ctx.db
          .updateTable('scep_ra_certificates')
          .set(row)
          .where('profile_id', '=', next.profile_id)
          .where('fingerprint_sha256', '=', expected)
          .execute();
      }
      const now = await get(next.profile_id);
      if (!now) throw new Error('the SCEP RA record vanished while it was written');
      return now;
    },
  };
}

export function scepRepositories(ctx: Ctx): ScepStorage {
  return { scepRa: scepRaRepository(ctx) };
}
