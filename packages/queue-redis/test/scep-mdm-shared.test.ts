import { silentLogger, systemClock } from '@certwright/core';
import { createSelfSignedCertificate, generateKeyPair, pemEncode } from '@certwright/core/pki';
import { MDM_CHALLENGE_STATUSES, MdmChallengeVerifier, mintScepChallenge } from '@certwright/protocols/scep';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, RedisEphemeralStore } from '../src/index.js';
import { deletePrefix, REDIS_URL, runPrefix, testRedis } from './support.js';

/**
 * Two SCEP instances on one Redis: a device-management challenge used on one is a replay on
 * the other, and both read the same per-status counters.
 */
const { client, skip } = await testRedis();
const prefix = runPrefix('scep-mdm');
const describeRedis = skip ? describe.skip : describe;
if (skip) console.warn(`[scep-mdm on redis] skipping: ${skip}`);

let second: Awaited<ReturnType<typeof connectRedis>> | undefined;
let signer: { key: import('node:crypto').KeyObject; der: Buffer; pem: string };

beforeAll(async () => {
  if (!client) return;
  second = await connectRedis({ url: REDIS_URL });
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const now = Date.now();
  const cert = createSelfSignedCertificate(
    {
      subject: 'CN=shared mdm',
      notBefore: new Date(now - 86_400_000),
      notAfter: new Date(now + 86_400_000),
      keyUsage: ['digitalSignature'],
    },
    privateKey,
  );
  signer = { key: privateKey, der: cert.der, pem: pemEncode('CERTIFICATE', cert.der) };
});

afterAll(async () => {
  if (!client) return;
  await deletePrefix(client, prefix);
  client.destroy();
  second?.destroy();
});

const instance = (redis: NonNullable<typeof client>) =>
  new MdmChallengeVerifier(
    { clock: systemClock, ephemeral: new RedisEphemeralStore(redis, { prefix }), logger: silentLogger },
    { readTrustFile: async () => signer.pem },
  );

describeRedis('MDM challenges shared through Redis', () => {
  it('refuses on one instance a challenge used on another, and both count the same totals', async () => {
    const a = instance(client!);
    const b = instance(second!);
    const token = mintScepChallenge({
      key: signer.key,
      certificate: signer.der,
      audience: 'urn:certwright:scep:prof-shared',
      claims: { cn: 'shared-device', compliant: true },
    });
    const input = {
      profileId: 'prof-shared',
      settings: {
        trust_bundle_path: '/mdm.pem',
        audience: null,
        max_lifetime_seconds: 3600,
        require_compliance: true,
      },
      challenge: token,
      csr: { commonNames: ['shared-device'], subjectAltNames: [] },
      remoteAddress: '127.0.0.1',
    };
    const results = await Promise.all([a.verify(input), b.verify(input)]);
    expect(results.map((r) => r.status).sort()).toEqual(['replay', 'success']);
    const fromA = await a.counters('prof-shared');
    expect(Object.keys(fromA)).toEqual([...MDM_CHALLENGE_STATUSES]);
    expect(fromA).toMatchObject({ success: 1, replay: 1 });
    expect(await b.counters('prof-shared')).toEqual(fromA);
  });
});
