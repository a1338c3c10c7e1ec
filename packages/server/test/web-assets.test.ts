import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@certwright/core';
import { describe, expect, it } from 'vitest';
import { apiSegmentsOf, loadWebAssets, openWebAssets, WEB_CSP } from '../src/web-assets.js';

function builtConsole(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cw-web-dist-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><script type="module" src="/assets/app-1a2b.js"></script>',
  );
  writeFileSync(join(dir, 'assets', 'app-1a2b.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  writeFileSync(join(dir, '.dev-build-stamp'), 'secret-ish');
  return dir;
}

function recordingLogger(lines: string[]): Logger {
  const log = (_: unknown, message?: string) => {
    lines.push(message ?? '');
  };
  const logger = {
    info: log,
    warn: log,
    error: log,
    debug: log,
    trace: log,
    fatal: log,
    child: () => logger,
  };
  return logger as unknown as Logger;
}

const get = (path: string, init: RequestInit = {}) => new Request(`https://localhost${path}`, init);

describe('the web console assets the reference server serves', () => {
  const web = loadWebAssets(builtConsole());

  it('answers / and client routes with index.html under the strict headers, revalidated', async () => {
    for (const path of ['/', '/certificates/abc', '/login']) {
      const response = web.serve(get(path));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toBe(WEB_CSP);
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await response.text()).toContain('/assets/app-1a2b.js');
    }
    expect(WEB_CSP).not.toMatch(/unsafe/);
  });

  it('caches hashed assets for a year, gzips them on request, and 404s missing files and dotfiles', async () => {
    const plain = web.serve(get('/assets/app-1a2b.js'));
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-encoding')).toBeNull();
    const zipped = web.serve(get('/assets/app-1a2b.js', { headers: { 'accept-encoding': 'gzip, br' } }));
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(Number(zipped.headers.get('content-length'))).toBeLessThan(
      Number(plain.headers.get('content-length')),
    );
    expect(web.serve(get('/assets/other.js')).status).toBe(404);
    expect(web.serve(get('/.dev-build-stamp')).status).toBe(404);
    expect(web.serve(get('/favicon.ico')).status).toBe(404);
    const head = web.serve(get('/', { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('leaves the API, protocol and probe paths and every non-GET method to the API', () => {
    for (const path of [
      '/api/v1/certificates',
      '/auth/oidc/login',
      '/.well-known/est/cacerts',
      '/acme/directory',
      '/health',
      '/ready',
      '/metrics',
    ]) {
      expect(web.owns(get(path)), path).toBe(false);
    }
    expect(web.owns(get('/certificates'))).toBe(true);
    expect(web.owns(get('/', { method: 'POST' }))).toBe(false);
    const segments = apiSegmentsOf({
      routes: [{ path: '/custom/x' }],
      protocols: [{ prefix: '/mount/here' }],
    });
    expect(web.owns(get('/custom/x'), segments)).toBe(false);
    expect(web.owns(get('/mount/here/a'), segments)).toBe(false);
  });

  it('starts without a built console and says so in one clear log line', () => {
    const lines: string[] = [];
    // A directory that is not a built console: refused with a warning, the API still served.
    expect(openWebAssets(recordingLogger(lines), join(tmpdir(), 'no-such-console'))).toBeUndefined();
    expect(lines).toEqual([
      expect.stringMatching(/^web console could not be loaded: \/ is not served, the API is$/),
    ]);
    const none: string[] = [];
    // No directory at all: the not-built line.
    expect(openWebAssets(recordingLogger(none), '')).toBeUndefined();
    expect(none).toEqual([expect.stringMatching(/^web console not built .*\/ is not served, the API is$/)]);
  });
});
