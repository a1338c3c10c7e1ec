import { buildCertsOnly } from '@certwright/core/pki';
import type { EstClient } from '../server/enrollment.js';
import type { EstAuthority } from './authority.js';
import { base64Response, PKCS7_CERTS_ONLY } from './encoding.js';

/**
 * `POST …/simpleenroll` and `…/simplereenroll` (RFC 7030 §4.2): a PKCS#10 CSR in (base64 DER,
 * PEM or DER, recognized by content), the issued certificate out as certs-only CMS holding
 * just that certificate (RFC 7030 §4.2.3).
 */
export async function simpleEnroll(
  authority: EstAuthority,
  pathId: string | null,
  operation: 'simpleenroll' | 'simplereenroll',
  client: EstClient,
  body: Uint8Array,
): Promise<Response> {
  const result = await authority.enroll(pathId, operation, client, body);
  return base64Response(buildCertsOnly([result.certificate]), PKCS7_CERTS_ONLY);
}
