import { pathnameOf, type RequestHead } from '@certwright/core';

/**
 * Small helpers shared by the protocol handlers. Protocol endpoints answer in their own wire
 * formats (DER, OCSP responses), so errors here are short text bodies, not problem JSON.
 */

/** Issuer ids are storage ids (`iss-…`); anything else cannot name an issuer. */
const ISSUER_ID = /^[A-Za-z0-9._-]{1,128}$/;

export const isIssuerId = (value: string): boolean => ISSUER_ID.test(value);

export function textResponse(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(`${text}\n`, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', ...headers },
  });
}

export function binaryResponse(
  status: number,
  body: Uint8Array,
  contentType: string,
  headers: Record<string, string> = {},
): Response {
  // Copy into a fresh ArrayBuffer-backed view: Response wants a BodyInit, and the source may be
  // a Buffer slice of a larger pool.
  const copy = new Uint8Array(body.byteLength);
  copy.set(body);
  return new Response(copy, {
    status,
    headers: { 'content-type': contentType, 'content-length': String(copy.byteLength), ...headers },
  });
}

/** Strips a handler's mount prefix; returns the remaining path segments or null when outside. */
export function segmentsAfter(pathname: string, prefix: string): string[] | null {
  if (!pathname.startsWith(prefix)) return null;
  if (pathname.length === prefix.length) return [];
  if (pathname.charCodeAt(prefix.length) !== SLASH) return null;
  // Character by character, not a RegExp: this runs up to three times on every OCSP request.
  return splitAfterSlashes(pathname, prefix.length + 1);
}

/** The path segments of a request below its mount's prefix; [] at the prefix itself. */
export const pathSegments = (request: RequestHead, prefix: string): string[] =>
  segmentsAfter(pathnameOf(request), prefix) ?? [];

const SLASH = 0x2f;

/** The '/'-separated segments of `path` from `start` on, slashes at `start` skipped. */
function splitAfterSlashes(path: string, start: number): string[] {
  let from = start;
  while (path.charCodeAt(from) === SLASH) from++;
  return from >= path.length ? [] : path.slice(from).split('/');
}

/** Whether `Accept` asks for `type` explicitly (no q-value weighing: these clients send one type). */
export function accepts(request: RequestHead, type: string): boolean {
  const accept = request.headers.get('accept');
  if (!accept) return false;
  return accept
    .toLowerCase()
    .split(',')
    .some((part) => part.split(';')[0]!.trim() === type);
}

/** Seconds until `date`, clamped to [0, max]; for Cache-Control max-age. */
export function secondsUntil(date: Date, now: Date, max = 7 * 24 * 3600): number {
  return Math.max(0, Math.min(max, Math.floor((date.getTime() - now.getTime()) / 1000)));
}
