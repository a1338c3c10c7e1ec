import { randomBytes } from 'node:crypto';
import { fail } from '@certwright/core';
import { buildCertsOnly } from '@certwright/core/pki';
import type { EstClient } from '../server/enrollment.js';
import type { EstAuthority } from './authority.js';
import { multipartMixed, PKCS7_CERTS_ONLY, PKCS7_SERVER_KEY } from './encoding.js';

/**
 * `POST …/serverkeygen` (RFC 7030 §4.4): the server makes the key. The answer is
 * `multipart/mixed` with a random boundary: first the private key (PKCS#8 in CMS
 * EnvelopedData to the CSR's RSA key, `smime-type=server-generated-key`), then the
 * certificate with its chain (certs-only).
 */
export async function serverKeygen(
  authority: EstAuthority,
  pathId: string | null,
  client: EstClient,
  body: Uint8Array,
): Promise<Response> {
  const result = await authority.enroll(pathId, 'serverkeygen', client, body);
  if (!result.envelopedKey) throw fail('internal', 'serverkeygen produced no key');
  const boundary = `est-${randomBytes(18).toString('base64url')}`;
  const text = multipartMixed(boundary, [
    { contentType: PKCS7_SERVER_KEY, der: result.envelopedKey },
    { contentType: PKCS7_CERTS_ONLY, der: buildCertsOnly([result.certificate, ...result.chain]) },
  ]);
  return new Response(text, {
    status: 200,
    headers: { 'content-type': `multipart/mixed; boundary=${boundary}`, 'cache-control': 'no-store' },
  });
}
