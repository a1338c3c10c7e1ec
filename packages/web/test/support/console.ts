/**
 * Shared setup of the browser tests: the reference server started in-process over TLS with the
 * built console, a bearer-key API helper for checking server state, the API-key sign-in, and the
 * screenshot + axe-core check every page passes.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@certwright/core';
import { parseConfig, type RunningServer, type StartOptions, startServer } from '@certwright/server';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { bearer, httpsCall } from '../../../server/test/support/https.js';
import type { makeTestPki } from '../../../server/test/support/openssl-pki.js';
import { dist, ensureConsoleBuilt, webDir } from './chromium.js';

/** Screenshots of every page, for people to look at (git-ignored). */
export const shots = join(webDir, 'test-output', 'screenshots');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleServer {
  server: RunningServer;
  origin: string;
  /** A call with the admin key; a 4xx or 5xx answer throws with its body. */
  // biome-ignore lint/suspicious/noExplicitAny: the tests read the JSON answers field by field, as httpsCall's json
  api: (method: string, path: string, body?: unknown) => Promise<any>;
}

/**
 * Builds the console if needed and starts the reference server serving it on a loopback port,
 * with `secret` as the admin API key. `env` adds configuration variables, `options` the
 * in-process knobs (loopback webhooks and scans, faster ticks).
 */
export async function startConsoleServer(
  pki: ReturnType<typeof makeTestPki>,
  secret: string,
  options: StartOptions = {},
  env: Record<string, string> = {},
): Promise<ConsoleServer> {
  ensureConsoleBuilt();
  mkdirSync(shots, { recursive: true });
  const config = parseConfig({
    SVC_TLS_CERT_PATH: pki.issued.server!.cert,
    SVC_TLS_KEY_PATH: pki.issued.server!.key,
    SVC_AUTH_SECRET: secret,
    SVC_LISTEN_ADDR: '127.0.0.1',
    SVC_PORT: '0',
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'cw-web-')),
    ...env,
  });
  const server = await startServer(config, silentLogger, { webDir: dist, ...options });
  await server.ready;
  const ca = readFileSync(pki.ca);
  const api = async (method: string, path: string, body?: unknown) => {
    const reply = await httpsCall(server.port, ca, path, { method, body, headers: bearer(secret) });
    if (reply.status >= 400) throw new Error(`${method} ${path} → ${reply.status} ${reply.body}`);
    return reply.json;
  };
  return { server, origin: `https://127.0.0.1:${server.port}`, api };
}

/** Signs in on /login with the API key and waits for the dashboard. */
export async function signInWithKey(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/login`);
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByRole('button', { name: 'Sign in with API key' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function accessible(page: Page, name: string) {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  // Evaluated through the DevTools protocol from the installed file, not as an inline script tag.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: (o: unknown) => Promise<{
            violations: { id: string; impact: string; help: string; nodes: { target: unknown }[] }[];
          }>;
        };
      }
    ).axe;
    const result = await axe.run({ resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
  });
  expect(violations, `axe on ${name}`).toEqual([]);
}
