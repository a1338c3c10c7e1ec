import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '@certwright/core';
import { copyMigratedPgliteDataDir } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import {
  runServer,
  runServerCommand,
  type ServerProcess,
  startServerProcess,
} from './support/server-process.js';

const SECRET = 'key-rotation-test-secret-0123456';
const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca);
const b64 = (key: Uint8Array) => Buffer.from(key).toString('base64');

/** Waits for `condition` to hold, polling every 100 ms, for at most `ms`. */
async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('rotating the encryption key of a running installation', () => {
  let dir: string;
  let env: Record<string, string>;
  let oldKey: Uint8Array;
  const newKey = SecretBox.generateKey();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cw-rotation-'));
    ({ key: oldKey } = await copyMigratedPgliteDataDir(join(dir, 'pglite')));
    env = {
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SVC_DATA_DIR: dir,
      SVC_LISTEN_ADDR: '127.0.0.1',
      SVC_PORT: '0',
    };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const stop = async (server: ServerProcess) => {
    server.child.kill('SIGTERM');
    await server.exited;
  };

  it('re-seals every secret through a stop in the middle, then starts without the old key; the audit trail verifies across it', async () => {
    // Secrets under the old key: issuer configurations, a CA key, a server-generated private key.
    const first = await startServerProcess({ ...env, SVC_ENCRYPTION_KEY: b64(oldKey) });
    const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
      httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });
    let certificateId: string;
    let keyData: unknown;
    try {
      for (let i = 0; i < 20; i += 1) {
        expect(
          (await call(first, 'POST', '/api/v1/issuers', { name: `CA ${i}`, type: 'Local' })).status,
        ).toBe(201);
      }
      const created = await call(first, 'POST', '/api/v1/certificates', {
        name: 'web',
        common_name: 'web.example.com',
        sans: ['web.example.com'],
        renewal_policy_id: 'rp-default',
        issuer_id: 'iss-local',
        owner_id: 'own-default',
        team_id: 'team-default',
        profile_id: 'prof-default',
      });
      expect(created.status).toBe(201);
      certificateId = created.json.id;
      const deadline = Date.now() + 60_000;
      let reply = await call(first, 'GET', `/api/v1/certificates/${certificateId}/key-data`);
      while (reply.status !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        reply = await call(first, 'GET', `/api/v1/certificates/${certificateId}/key-data`);
      }
      expect(reply.status).toBe(200);
      keyData = reply.json;
    } finally {
      await stop(first);
    }

    const rotating = { ...env, SVC_ENCRYPTION_KEY: b64(newKey), SVC_ENCRYPTION_KEY_PREVIOUS: b64(oldKey) };
    // The command re-seals one row per batch; it is killed after three batches.
    const interrupted = runServerCommand(['rekey', '--batch-size', '1'], rotating);
    await until(
      () => (interrupted.stderr().match(/^re-sealed /gm) ?? []).length >= 3,
      120_000,
      'three batches',
    );
    interrupted.child.kill('SIGKILL');
    await interrupted.exited;

    const status = runServerCommand(['rekey', '--status'], rotating);
    expect(await status.exited).toBe(1);
    const progress = JSON.parse(status.stdout());
    expect(progress.progress.resealed).toBeGreaterThanOrEqual(3);
    expect(progress.remaining).toBeGreaterThan(0);

    // Too early to drop the old key: refused, naming the variable and the old key's id.
    const early = runServer({ ...env, SVC_ENCRYPTION_KEY: b64(newKey) });
    expect(await early.exited).not.toBe(0);
    expect(early.output()).toMatch(
      new RegExp(`sealed under key ${new SecretBox(oldKey).keyId}.*SVC_ENCRYPTION_KEY_PREVIOUS`),
    );

    // A server with both keys finishes the run in its background job, from where it stopped.
    const resumed = await startServerProcess(rotating);
    try {
      await until(
        () => /encryption key re-seal finished/.test(resumed.output()),
        120_000,
        'the re-seal to finish',
      );
    } finally {
      await stop(resumed);
    }

    // Without the previous key: it starts, the secrets open, and the trail verifies.
    const after = await startServerProcess({ ...env, SVC_ENCRYPTION_KEY: b64(newKey) });
    try {
      const reply = await httpsCall(after.port, ca, `/api/v1/certificates/${certificateId}/key-data`, {
        headers: bearer(SECRET),
      });
      expect(reply.status).toBe(200);
      expect(reply.json).toEqual(keyData);
      const chain = await httpsCall(after.port, ca, '/api/v1/issuers/iss-local/chain', {
        headers: bearer(SECRET),
      });
      expect(chain.status).toBe(200);
      const verify = await httpsCall(after.port, ca, '/api/v1/audit/verify', { headers: bearer(SECRET) });
      expect(verify.json).toMatchObject({ ok: true });
      const trail = await httpsCall(after.port, ca, '/api/v1/audit?per_page=200', {
        headers: bearer(SECRET),
      });
      const actions = (trail.json.data as { action: string; actor: string }[]).map(
        (e) => `${e.action} ${e.actor}`,
      );
      expect(actions).toContain('encryption_key_rekey_start rekey-command');
      expect(actions).toContain('encryption_key_rekeyed rekey-job');
    } finally {
      await stop(after);
    }

    // The old key alone is no key of this database any more; neither is a stranger's.
    for (const key of [oldKey, SecretBox.generateKey()]) {
      const refused = runServer({ ...env, SVC_ENCRYPTION_KEY: b64(key) });
      expect(await refused.exited).not.toBe(0);
      expect(refused.output()).toMatch(/SVC_ENCRYPTION_KEY does not open the secrets in this database/);
    }
  }, 600_000);
});
