import { isCertwrightError } from '@certwright/core';
import { decodeBase64Url } from '@certwright/core/pki';
import { acmeRevocationReason } from '../server/revoke.js';
import type { AcmeEndpoint } from './context.js';
import { requirePayload, stringMember } from './payload.js';
import { acmeProblem } from './problem.js';
import { acmeEmpty } from './responses.js';

/** A certificate is 0.5–4 KiB; the certificate parser allows 64 KiB. */
const MAX_CERTIFICATE_BYTES = 64 * 1024;

/**
 * POST /revoke-cert (RFC 8555 §7.6), signed by the account that ordered the certificate
 * (`kid`) or by the certificate's own key (`jwk`). `{certificate, reason?}`; reason codes 8 and
 * 10 are recorded as unspecified, an unassigned code is `badRevocationReason`, a second
 * revocation `alreadyRevoked`.
 */
export const revokeCert: AcmeEndpoint = async (ctx) => {
  const auth = await ctx.authenticate({ key: 'either' });
  const payload = requirePayload(auth.payload);
  const certificateDer = decodeBase64Url(
    stringMember(payload, 'certificate'),
    'certificate',
    MAX_CERTIFICATE_BYTES,
  );
  const reason = payload.reason;
  if (reason !== undefined) {
    try {
      acmeRevocationReason(typeof reason === 'number' ? reason : Number.NaN);
    } catch (error) {
      if (isCertwrightError(error)) throw acmeProblem('badRevocationReason', error.message, { cause: error });
      throw error;
    }
  }
  await ctx.authority.revoke(
    { certificateDer, ...(typeof reason === 'number' ? { reason } : {}) },
    auth.kind === 'account' ? { account: auth.account } : { jwkThumbprint: auth.thumbprint },
  );
  return acmeEmpty(200);
};
