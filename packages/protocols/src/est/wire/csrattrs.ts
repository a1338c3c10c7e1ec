import type { EstAuthority } from './authority.js';
import { base64Response, CSRATTRS } from './encoding.js';

/**
 * `GET …/csrattrs` (RFC 7030 §4.5): the attributes the profile wants in a CSR; 204 when it
 * wants none (RFC 7030 §4.5.2 allows 204 or 404; 204 says the profile exists).
 */
export async function csrattrs(authority: EstAuthority, pathId: string | null): Promise<Response> {
  const der = await authority.csrAttributes(pathId);
  if (!der) return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
  return base64Response(der, CSRATTRS);
}
