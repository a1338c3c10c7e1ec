import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Clock,
  createServices,
  type PkiOptions,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  type TransportContext,
} from '@certwright/core';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { type CertwrightHandler, createHandler } from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';

export const KEY = 'lifecycle-test-key-0123456789abcdef';
const transport: TransportContext = { remoteAddress: '127.0.0.1' };

export interface LifecycleApp {
  handler: CertwrightHandler;
  services: Services;
  storage: Awaited<ReturnType<typeof createPgliteStorage>>;
  /** Ids of an owner, a team and a Local issuer created without CA material. */
  ids: { owner: string; team: string; issuer: string };
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  json<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  createCertificate(fields?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

/** Real services on in-memory PGlite with the composed handler (REST + CRL + OCSP). */
export async function createLifecycleApp(options: { clock: Clock; pki?: PkiOptions }): Promise<LifecycleApp> {
  const storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: options.clock,
  });
  const services = createServices(
    { storage, clock: options.clock, logger: silentLogger },
    { pki: options.pki ?? {} },
  );
  const handler = createHandler({
    auth: { type: 'api-key', secret: KEY },
    services,
    ...conformance.options(),
  });
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'PKI owner', email: 'pki@example.test' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'PKI team' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'Local test CA', type: 'Local' });
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    conformance.call(
      handler,
      new Request(`https://localhost:8443${path}`, {
        method,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
      transport,
    );
  const json = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    handler,
    services,
    storage,
    ids: { owner: owner.id, team: team.id, issuer: issuer.id },
    call,
    json,
    async createCertificate(fields = {}) {
      const res = await json('POST', '/api/v1/certificates', {
        name: `cert-${randomBytes(4).toString('hex')}`,
        common_name: 'app.example.test',
        sans: ['www.example.test', '127.0.0.7'],
        renewal_policy_id: 'rp-default',
        issuer_id: issuer.id,
        owner_id: owner.id,
        team_id: team.id,
        ...fields,
      });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    close: () => storage.close(),
  };
}

/** Runs openssl with files written to a temporary directory; returns stdout (throws on non-zero exit). */
export function openssl(args: (string | { file: string | Uint8Array; name: string })[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'cw-openssl-'));
  try {
    const argv = args.map((a) => {
      if (typeof a === 'string') return a;
      const path = join(dir, a.name);
      writeFileSync(path, a.file);
      return path;
    });
    return execFileSync('openssl', argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
