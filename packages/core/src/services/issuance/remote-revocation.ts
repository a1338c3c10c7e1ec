import { isCertwrightError } from '../../errors.js';
import type { ServiceDeps } from '../context.js';
import type { RevocationEvent } from '../revocation.js';
import type { IssuerConnectorCache } from './connector-cache.js';

/** Issuer types whose CA learns of a revocation through its connector (the Local CA reads storage). */
const REMOTE_ISSUER_TYPES = new Set(['ACME']);
const PAGE = 100;

/**
 * A revocation listener that tells remote CAs (ACME revokeCert, RFC 8555 §7.6) about the
 * revocation certwright has just committed: for each revoked certificate of an issuer of a
 * remote type, every unexpired version that issuer signed (only `version_id` when the event
 * names one). Runs after the commit, before the revoke call returns; a CA that refuses or
 * cannot be reached is logged (`remote revocation failed`) and does not undo the revocation
 * in certwright's inventory. A CA that already revoked the certificate is not an error.
 */
export function remoteRevocationListener(deps: ServiceDeps, connectors: IssuerConnectorCache) {
  return async (event: RevocationEvent): Promise<void> => {
    if (!event.certificate_ids?.length) return;
    const remote = new Set<string>();
    for (const id of event.issuer_ids) {
      const issuer = await deps.storage.issuers.get(id);
      if (issuer && REMOTE_ISSUER_TYPES.has(issuer.type)) remote.add(id);
    }
    if (remote.size === 0) return;
    const now = deps.clock.now();
    for (const certificateId of event.certificate_ids) {
      const versions = event.version_id
        ? [await deps.storage.versions.get(event.version_id)].filter((v) => v !== null)
        : (await deps.storage.versions.listForCertificate(certificateId, { page: 1, perPage: PAGE })).items;
      for (const version of versions) {
        if (!remote.has(version.issuer_id) || version.not_after <= now) continue;
        try {
          const connector = await connectors.require(version.issuer_id);
          await connector.revoke(version.serial_number, event.reason);
          deps.logger.info(
            {
              issuer_id: version.issuer_id,
              certificate_id: certificateId,
              serial_number: version.serial_number,
            },
            'remote CA told of the revocation',
          );
        } catch (error) {
          if (isCertwrightError(error) && error.reason === 'already_revoked') continue;
          deps.logger.error(
            {
              err: error,
              issuer_id: version.issuer_id,
              certificate_id: certificateId,
              serial_number: version.serial_number,
            },
            'remote revocation failed',
          );
        }
      }
    }
  };
}
