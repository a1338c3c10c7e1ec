/**
 * A bounded reader of HTTP/1.1 request heads (RFC 9112 §2–§6) for the direct path's
 * connections (direct-connections.ts). It takes only the plain shape the direct entry answers:
 * an origin-form target, HTTP/1.1, a Host, no body or one of a single Content-Length. Anything
 * else — chunked bodies, Expect, Upgrade, obsolete line folding, HTTP/1.0, odd characters — is
 * `other`: the connection then goes to node:http with the bytes unread, and node:http answers
 * it by its own rules (400s included). It never throws on what a client sends.
 */

export type HeadRead =
  /** No end of head yet, and the bytes so far are within the limit. */
  | { kind: 'incomplete' }
  /** No end of head within `maxHeadBytes`: answered 431, the connection closes. */
  | { kind: 'too_large' }
  /** Not a request this reader takes: node:http reads it. */
  | { kind: 'other' }
  | ({ kind: 'request' } & RequestHeadFields);

export interface RequestHeadFields {
  method: string;
  /** Origin-form target, as sent. */
  target: string;
  /** Header names and values alternating, as sent (values trimmed), like `IncomingMessage.rawHeaders`. */
  rawHeaders: string[];
  host: string;
  /** Bytes of the head, final CRLF CRLF included: the body starts there. */
  headLength: number;
  /** The declared body length; 0 when none is declared. */
  contentLength: number;
  /** The client asked to close after this answer (`Connection: close`). */
  close: boolean;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
/** RFC 9110 §5.6.2 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space and tab: what a field value may hold here (no obs-text, no controls). */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
/** An origin-form target: '/', then visible ASCII (RFC 9112 §3.2.1). */
const ORIGIN_FORM = /^\/[\x21-\x7e]*$/;
const DIGITS = /^\d{1,15}$/;

/** Reads the head at the start of `bytes` (the connection's unread bytes). */
export function readRequestHead(bytes: Buffer, maxHeadBytes: number): HeadRead {
  const end = bytes.indexOf(CRLFCRLF, 0);
  if (end < 0 || end + 4 > maxHeadBytes) {
    // A head that ends past the limit is as oversized as one that has not ended by it.
    return end < 0 && bytes.length < maxHeadBytes ? { kind: 'incomplete' } : { kind: 'too_large' };
  }
  const lines = bytes.toString('latin1', 0, end).split('\r\n');
  const requestLine = (lines[0] as string).split(' ');
  if (requestLine.length !== 3) return { kind: 'other' };
  const [method, target, version] = requestLine as [string, string, string];
  if (version !== 'HTTP/1.1' || !TOKEN.test(method) || !ORIGIN_FORM.test(target)) return { kind: 'other' };
  const rawHeaders: string[] = [];
  let host: string | undefined;
  let contentLength: string | undefined;
  let close = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    // No colon, an empty name, or a name with whitespace (obs-fold starts with it): not ours.
    if (colon <= 0) return { kind: 'other' };
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!TOKEN.test(name) || !FIELD_VALUE.test(value)) return { kind: 'other' };
    switch (name.toLowerCase()) {
      case 'host':
        if (host !== undefined) return { kind: 'other' };
        host = value;
        break;
      case 'content-length':
        if (contentLength !== undefined || !DIGITS.test(value)) return { kind: 'other' };
        contentLength = value;
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return { kind: 'other' };
      case 'connection':
        for (const option of value.toLowerCase().split(',')) {
          const token = option.trim();
          if (token === 'close') close = true;
          else if (token === 'upgrade') return { kind: 'other' };
        }
        break;
    }
    rawHeaders.push(name, value);
  }
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is refused (node:http answers its 400).
  if (host === undefined) return { kind: 'other' };
  return {
    kind: 'request',
    method,
    target,
    rawHeaders,
    host,
    headLength: end + 4,
    contentLength: contentLength === undefined ? 0 : Number(contentLength),
    close,
  };
}

/**
 * `Headers.get` over raw headers: case-insensitive, repeated fields joined with ", ". Answers
 * are kept: a connection reuses the getter of a repeated head (direct-connections.ts), and the
 * direct entry asks for the same few names on every request.
 */
export function rawHeaderGetter(raw: readonly string[]): { get(name: string): string | null } {
  const known = new Map<string, string | null>();
  return {
    get(name) {
      const wanted = name.toLowerCase();
      const kept = known.get(wanted);
      if (kept !== undefined) return kept;
      let value: string | null = null;
      for (let i = 0; i < raw.length; i += 2) {
        if ((raw[i] as string).toLowerCase() !== wanted) continue;
        const v = raw[i + 1] as string;
        value = value === null ? v : `${value}, ${v}`;
      }
      known.set(wanted, value);
      return value;
    },
  };
}
