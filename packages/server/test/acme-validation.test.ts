import { createServices, type Logger, ManualClock, SecretBox, silentLogger } from '@certwright/core';
import { type AcmeChallengeValidator, createAcmeServer } from '@certwright/protocols/acme';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { SqlQueue } from '@certwright/storage-sql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { acmeValidation } from '../src/acme-validation.js';
import { parseConfig } from '../src/config.js';
import { startWorkers, workTopics } from '../src/workers.js';

const base = { SVC_TLS_CERT_PATH: '/c.pem', SVC_TLS_KEY_PATH: '/k.pem', SVC_AUTH_TYPE: 'none' };

function capturingLogger(): Logger & { warnings: { fields: object; message?: string }[] } {
  const warnings: { fields: object; message?: string }[] = [];
  const logger = {
    ...silentLogger,
    warnings,
    warn(fields: object, message?: string) {
      warnings.push({ fields, message });
    },
    child: () => logger,
  };
  return logger;
}

describe('ACME validation settings of the server', () => {
  it('warns loudly at start-up when validation may reach loopback, and not otherwise', () => {
    const quiet = capturingLogger();
    acmeValidation(parseConfig({ ...base, SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES: '10.0.0.0/8' }), quiet);
    expect(quiet.warnings).toEqual([]);
    const loud = capturingLogger();
    const settings = acmeValidation(
      parseConfig({
        ...base,
        SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES: '127.0.0.1',
        SVC_ACME_SERVER_HTTP01_CONCURRENCY: '3',
      }),
      loud,
    );
    expect(loud.warnings).toHaveLength(1);
    expect(loud.warnings[0]!.message).toMatch(/LOOPBACK/);
    expect(loud.warnings[0]!.fields).toMatchObject({ variable: 'SVC_ACME_SERVER_VALIDATION_ALLOWED_RANGES' });
    expect(settings.concurrency).toEqual({ 'http-01': 3, 'dns-01': 10, 'tls-alpn-01': 10 });
  });
});

describe('ACME validation topics', () => {
  const clock = new ManualClock('2026-03-01T00:00:00Z');
  let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
  beforeAll(async () => {
    storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(SecretBox.generateKey()), clock });
  }, 180_000);
  afterAll(() => storage?.close());

  it('registers one topic per challenge type with its pool, and a responded challenge is validated by the worker', async () => {
    const queue = new SqlQueue(storage.db);
    const services = createServices({ storage, clock, logger: silentLogger });
    const acme = createAcmeServer(services, { queue });
    const seen: string[] = [];
    const validator: AcmeChallengeValidator = async (challenge) => {
      seen.push(`${challenge.type} ${challenge.identifier.value}`);
    };
    const topics = workTopics(services, {
      acmeValidation: {
        challenges: acme.challenges,
        validator,
        concurrency: { 'http-01': 4, 'dns-01': 2, 'tls-alpn-01': 3 },
      },
    });
    expect(Object.fromEntries(topics.map((t) => [t.topic, t.concurrency]))).toMatchObject({
      'acme.validate.http-01': 4,
      'acme.validate.dns-01': 2,
      'acme.validate.tls-alpn-01': 3,
    });
    expect(workTopics(services).map((t) => t.topic)).not.toContain('acme.validate.http-01');

    const account = await storage.acmeAccounts.create({
      profile_id: 'prof-default',
      status: 'valid',
      jwk: { kty: 'OKP', crv: 'Ed25519', x: 'worker' },
      jwk_thumbprint: 'worker-thumbprint',
      contact: [],
      terms_agreed: true,
      eab_key_id: null,
      created_ip: null,
    });
    const order = await acme.orders.newOrder(account, {
      identifiers: [{ type: 'dns', value: 'worker.example.com' }],
    });
    const dns = order.authorizations[0]!.challenges.find((c) => c.type === 'dns-01')!;
    const host = startWorkers(queue, topics, silentLogger, { pollIntervalMs: 50 });
    try {
      await acme.challenges.respondToChallenge(account, dns.id);
      await vi.waitFor(
        async () => {
          const view = await acme.orders.order(account, order.order.id);
          expect(view.order.status).toBe('ready');
        },
        { timeout: 60_000, interval: 100 },
      );
    } finally {
      await host.stop();
    }
    expect(seen).toEqual(['dns-01 worker.example.com']);
  }, 120_000);
});
