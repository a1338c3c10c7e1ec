import { createHash, randomBytes } from 'node:crypto';
import {
  createServices,
  ManualClock,
  NotificationChannelRegistry,
  type NotificationEvent,
  SecretBox,
  type ServiceDeps,
  type Services,
  silentLogger,
  type TransportContext,
} from '@certwright/core';
import {
  certificateToPem,
  certificationRequestToPem,
  createCertificationRequest,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '@certwright/core/pki';
import { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { type CertwrightHandler, createHandler } from '../src/index.js';
import { conformance } from './support/openapi-conformance.js';

export const ADMIN_KEY = 'ops-test-admin-key-0123456789';
const transport: TransportContext = { remoteAddress: '127.0.0.1' };

export interface OpsApp {
  handler: CertwrightHandler;
  services: Services;
  clock: ManualClock;
  channels: NotificationChannelRegistry;
  dead: NotificationEvent[];
  /** Calls the handler; `key` null sends no Authorization header, undefined the admin key. */
  call(method: string, path: string, options?: { body?: unknown; key?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The handler over real services on in-memory PGlite, with a ManualClock shared by storage and
 * services so timestamps are exact. Lives beside the tests of agents, targets, jobs,
 * notifications and audit.
 */
export async function createOpsApp(
  options: { authType?: 'api-key' | 'none'; deps?: Partial<ServiceDeps> } = {},
): Promise<OpsApp> {
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(randomBytes(32)), clock });
  const channels = new NotificationChannelRegistry();
  const dead: NotificationEvent[] = [];
  const services = createServices({
    storage,
    clock,
    logger: silentLogger,
    notifications: { channels, onDead: (event) => dead.push(event) },
    ...options.deps,
  });
  const handler = createHandler({
    auth: options.authType === 'none' ? { type: 'none' } : { type: 'api-key', secret: ADMIN_KEY },
    services,
    ...conformance.options(),
  });
  return {
    handler,
    services,
    clock,
    channels,
    dead,
    call(method, path, { body, key } = {}) {
      const headers: Record<string, string> = {};
      const token = key === undefined ? ADMIN_KEY : key;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      return conformance.call(
        handler,
        new Request(`https://localhost:8443${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
        transport,
      );
    },
    close: () => storage.close(),
  };
}

/** Registers an agent through HTTP and returns its record and one-time key. */
export async function registerAgent(
  app: OpsApp,
  name = 'web-01',
): Promise<{ id: string; key: string; body: Record<string, unknown>; text: string }> {
  const res = await app.call('POST', '/api/v1/agents', {
    body: {
      name,
      hostname: `${name}.example.test`,
      os: 'linux',
      architecture: 'amd64',
      ip_address: '10.0.0.5',
      version: '2.0.0',
    },
  });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${await res.text()}`);
  const text = await res.text();
  const body = JSON.parse(text) as Record<string, unknown>;
  return { id: body.id as string, key: body.api_key as string, body, text };
}

/** Creates a target through HTTP for an agent. */
export async function createTarget(
  app: OpsApp,
  agentId: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown> & { id: string }> {
  const res = await app.call('POST', '/api/v1/targets', {
    body: {
      agent_id: agentId,
      name: 'edge nginx',
      type: 'NGINX',
      config: { path: '/etc/nginx/tls', password: 'hunter2-secret' },
      ...extra,
    },
  });
  if (res.status !== 201) throw new Error(`target create failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown> & { id: string };
}

/**
 * A certificate with an issued version (a real self-signed P-256 certificate and its key)
 * bound to the given targets, written through the storage port: the inventory routes are
 * another feature's, and these tests need only the records.
 */
export async function seedCertificate(
  app: OpsApp,
  targetIds: string[],
): Promise<{ certificateId: string; versionId: string; keyPem: string }> {
  const storage = app.services.deps.storage;
  const suffix = crypto.randomUUID().slice(0, 8);
  const owner = await storage.owners.create({ name: `owner-${suffix}`, email: 'owner@example.test' });
  const team = await storage.teams.create({ name: `team-${suffix}` });
  const issuer = await storage.issuers.create({ name: `local-${suffix}`, type: 'Local' });
  const policy = await storage.renewalPolicies.create({ name: `policy-${suffix}` });
  const certificate = await storage.certificates.create({
    name: `www-${suffix}`,
    common_name: 'www.example.test',
    issuer_id: issuer.id,
    owner_id: owner.id,
    team_id: team.id,
    renewal_policy_id: policy.id,
    status: 'Active',
  });
  await storage.certificates.setTargets(certificate.id, targetIds);
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const now = app.clock.now();
  const notAfter = new Date(now.getTime() + 90 * 86_400_000);
  const issued = createSelfSignedCertificate(
    { subject: 'CN=www.example.test', notBefore: now, notAfter },
    privateKey,
  );
  const keyPem = exportPkcs8Pem(privateKey);
  const version = await storage.versions.create({
    certificate_id: certificate.id,
    issuer_id: issuer.id,
    serial_number: issued.serialNumber,
    fingerprint_sha256: createHash('sha256').update(issued.der).digest('hex'),
    key_algorithm: 'ECDSA',
    key_size: 256,
    subject: 'CN=www.example.test',
    issued_at: now,
    not_before: issued.notBefore,
    not_after: issued.notAfter,
    csr_pem: null,
    cert_pem: certificateToPem(issued.der),
    chain_pem: '',
    private_key_pem: keyPem,
  });
  return { certificateId: certificate.id, versionId: version.id, keyPem };
}

/** A signed PKCS#10 request in PEM, as an agent that generates its own key would send. */
export async function agentCsrPem(): Promise<string> {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  return certificationRequestToPem(
    createCertificationRequest({ subject: 'CN=agent.example.test', privateKey }),
  );
}
