import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHead } from '@certwright/core';

/**
 * The session cookie. `__Host-` makes browsers refuse it unless it is Secure, has Path=/ and no
 * Domain, so no sibling host can plant or read it (RFC 6265bis §4.1.3.2). HttpOnly keeps it
 * from scripts; SameSite=Lax keeps it off cross-site subrequests and POSTs while a top-level
 * navigation back from the identity provider still carries it.
 */
export const SESSION_COOKIE = '__Host-cw_session';
/**
 * The CSRF cookie: readable by the web client, which echoes it in `X-CSRF-Token` on every
 * state-changing call made with the session cookie. Another site can make the browser send
 * cookies but cannot read this one, so it cannot supply the header.
 */
export const CSRF_COOKIE = '__Host-cw_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/** Cookie name → value of a `Cookie` header; the first occurrence of a name wins. */
export function parseCookies(header: string | null): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

/** The session token a request carries in its cookie, if any. */
export function sessionTokenOf(request: RequestHead): string | null {
  const value = parseCookies(request.headers.get('cookie')).get(SESSION_COOKIE);
  return value && /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : null;
}

/** The CSRF token bound to a session token: derived, so nothing more is stored. */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update(`certwright-csrf\0${sessionToken}`, 'utf8').digest('base64url');
}

/** Whether the request's `X-CSRF-Token` matches the session's, compared in constant time. */
export function csrfMatches(request: RequestHead, sessionToken: string): boolean {
  const presented = request.headers.get(CSRF_HEADER);
  if (!presented) return false;
  const expected = Buffer.from(csrfTokenFor(sessionToken));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `Set-Cookie` values that start a session (cookie lifetime = the session's absolute end). */
export function sessionCookies(token: string, maxAgeSeconds: number): string[] {
  const age = Math.max(0, Math.floor(maxAgeSeconds));
  return [
    `${SESSION_COOKIE}=${token}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${age}`,
    `${CSRF_COOKIE}=${csrfTokenFor(token)}; Path=/; Secure; SameSite=Lax; Max-Age=${age}`,
  ];
}

/** `Set-Cookie` values that remove both cookies. */
export function clearedSessionCookies(): string[] {
  return [
    `${SESSION_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0`,
    `${CSRF_COOKIE}=; Path=/; Secure; SameSite=Lax; Max-Age=0`,
  ];
}
