/**
 * EST wire formats (RFC 7030 §4, RFC 8951): bodies are base64 of DER, written here in lines of
 * 64 characters ended by CRLF (clients must accept any line breaks; RFC 8951 §3.1); the
 * `Content-Transfer-Encoding: base64` header is sent for clients written against RFC 7030.
 */

export const PKCS7_CERTS_ONLY = 'application/pkcs7-mime; smime-type=certs-only';
export const PKCS7_SERVER_KEY = 'application/pkcs7-mime; smime-type=server-generated-key';
export const CSRATTRS = 'application/csrattrs';

/** Base64 in 64-character lines, each ended by CRLF. */
export function base64Lines(der: Uint8Array): string {
  const text = Buffer.from(der).toString('base64');
  let out = '';
  for (let i = 0; i < text.length; i += 64) out += `${text.slice(i, i + 64)}\r\n`;
  return out;
}

export function base64Response(
  der: Uint8Array,
  contentType: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(base64Lines(der), {
    status: 200,
    headers: {
      'content-type': contentType,
      'content-transfer-encoding': 'base64',
      'cache-control': 'no-store',
      ...headers,
    },
  });
}

/**
 * Credentials of an `Authorization: Basic` header (RFC 7617), or undefined when the header
 * is absent, of another scheme, or not decodable. The user-id ends at the first colon.
 */
export function basicCredentials(header: string | null): { username: string; password: string } | undefined {
  if (!header) return undefined;
  const match = /^basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (!match || match[1]!.length > 4096) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * A `multipart/mixed` body (RFC 2046 §5.1) of base64 parts. The boundary is random per
 * response, so no part's content can contain it.
 */
export function multipartMixed(
  boundary: string,
  parts: readonly { contentType: string; der: Uint8Array }[],
): string {
  let out = '';
  for (const part of parts) {
    out += `--${boundary}\r\nContent-Type: ${part.contentType}\r\nContent-Transfer-Encoding: base64\r\n\r\n`;
    out += base64Lines(part.der);
  }
  return `${out}--${boundary}--\r\n`;
}
