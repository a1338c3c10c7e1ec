import { buildCertsOnly } from '@certwright/core/pki';
import type { EstAuthority } from './authority.js';
import { base64Response, PKCS7_CERTS_ONLY } from './encoding.js';

/** `GET …/cacerts` (RFC 7030 §4.1): the CA certificates as certs-only CMS, no authentication. */
export async function cacerts(authority: EstAuthority, pathId: string | null): Promise<Response> {
  return base64Response(buildCertsOnly(await authority.caCertificates(pathId)), PKCS7_CERTS_ONLY);
}
