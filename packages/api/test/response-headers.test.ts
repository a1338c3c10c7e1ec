import type { TransportContext } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP, createHandler } from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';

/**
 * Headers browsers act on: REST answers are never sniffed into something a browser would
 * render (`X-Content-Type-Options: nosniff`), and the API reference page is served under the web
 * console's Content-Security-Policy, which forbids framing it.
 */

const SECRET = 'headers-secret-0123456789abcdef';
const transport: TransportContext = { remoteAddress: '127.0.0.1' };
const handler = createHandler({ auth: { type: 'api-key', secret: SECRET }, ...conformance.options() });
const call = (path: string, init: RequestInit = {}) =>
  conformance.call(handler, new Request(`https://localhost:8443${path}`, init), transport);

describe('response headers of the REST layer', () => {
  it('marks every API JSON answer nosniff: results, problems, 401, 404, 405', async () => {
    const answers = [
      await call('/health'),
      await call('/api/v1/version'),
      await call('/api/v1/openapi.json', { headers: { authorization: `Bearer ${SECRET}` } }),
      await call('/api/v1/openapi.json'),
      await call('/api/v1/nothing-here', { headers: { authorization: `Bearer ${SECRET}` } }),
      await call('/api/v1/version', { method: 'DELETE' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 401, 404, 405]);
    for (const answer of answers) {
      expect(answer.headers.get('content-type')).toMatch(/json/);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it("serves /docs/api under the console's CSP with frame-ancestors 'none', and the page needs nothing it forbids", async () => {
    const page = await call('/docs/api');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    // No inline script or style (the policy would block them) and nothing from elsewhere.
    expect(html).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//i);
    expect(html).toContain('GET /api/v1/version');
  });
});
