import { createHash } from 'node:crypto';
import { validationError } from '../errors.js';
import type { CertificateListKey } from '../ports/storage.js';

/*
 * The opaque `cursor` / `next_cursor` of the certificate list (docs/api/inventory.md, "Paging a
 * large inventory"). A cursor is base64url JSON holding the position of the last row of a page
 * (sort value and id), the number of the page it leads to, and a digest of the query it belongs
 * to (filters, sort, order). A cursor that does not decode, has the wrong shape, or was made for
 * another query is a 400 naming `cursor`. The cursor carries no secret and grants nothing: any
 * position it names is one the caller may read anyway.
 */

const MAX_CURSOR_LENGTH = 1024;

interface CursorBody {
  /** Format version. */
  v: 1;
  /** Digest of the query the cursor continues. */
  q: string;
  /** Page number the cursor leads to. */
  p: number;
  /** Sort value: string, RFC 3339 instant (`t: 'd'`), or null. */
  k: string | null;
  t: 's' | 'd';
  /** Id of the last row before the cursor. */
  i: string;
  /** The estimated total of the first page, when it was estimated (not counted again). */
  n?: number;
}

/** A digest of everything that decides the order and membership of a list (not the page). */
export function queryDigest(query: Record<string, unknown>): string {
  const canonical = Object.keys(query)
    .sort()
    .filter((k) => query[k] !== undefined)
    .map((k) => {
      const v = query[k];
      return [k, v instanceof Date ? v.toISOString() : v];
    });
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 22);
}

export function encodeCursor(
  digest: string,
  page: number,
  key: CertificateListKey,
  estimatedTotal?: number,
): string {
  const body: CursorBody = {
    v: 1,
    q: digest,
    p: page,
    k: key.value instanceof Date ? key.value.toISOString() : key.value,
    t: key.value instanceof Date ? 'd' : 's',
    i: key.id,
    ...(estimatedTotal === undefined ? {} : { n: estimatedTotal }),
  };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

const invalid = (message: string) => validationError([{ field: 'cursor', message }]);

/** The position and page number a cursor names; 400 naming `cursor` for anything else. */
export function decodeCursor(
  cursor: string,
  digest: string,
  timestampSort: boolean,
): { page: number; key: CertificateListKey; estimatedTotal?: number } {
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw invalid('is not a cursor this list returned');
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    throw invalid('is not a cursor this list returned');
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    body.v !== 1 ||
    typeof body.q !== 'string' ||
    typeof body.i !== 'string' ||
    body.i.length === 0 ||
    body.i.length > 128 ||
    !Number.isSafeInteger(body.p) ||
    (body.p as number) < 2 ||
    (body.t !== 's' && body.t !== 'd') ||
    (body.k !== null && typeof body.k !== 'string') ||
    (typeof body.k === 'string' && body.k.length > 512) ||
    (body.n !== undefined && (!Number.isSafeInteger(body.n) || (body.n as number) < 0))
  )
    throw invalid('is not a cursor this list returned');
  if (body.q !== digest)
    throw invalid('belongs to a list with other filters, sort or order; start again without a cursor');
  let value: string | Date | null = body.k ?? null;
  if (value !== null && (body.t === 'd') !== timestampSort)
    throw invalid('is not a cursor this list returned');
  if (typeof value === 'string' && body.t === 'd') {
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) throw invalid('is not a cursor this list returned');
    value = at;
  }
  return {
    page: body.p as number,
    key: { value, id: body.i },
    ...(body.n === undefined ? {} : { estimatedTotal: body.n }),
  };
}
