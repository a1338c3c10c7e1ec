import { ManualClock, MemoryEphemeralStore } from '@certwright/core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CsrNames,
  MDM_CHALLENGE_STATUSES,
  type MdmChallengeStatus,
  mintScepChallenge,
} from '../../src/scep/index.js';
import {
  type MdmSigningIdentity,
  SETTINGS,
  signingIdentity,
  signRaw,
  T0,
  T0_SECONDS,
  verifierWith,
} from './support.js';

const PROFILE = 'prof-devices';
const DEVICE: CsrNames = {
  commonNames: ['device-0042'],
  subjectAltNames: [
    { type: 'dns', value: 'device-0042.corp.example' },
    { type: 'email', value: 'device-0042@corp.example' },
  ],
};
const CLAIMS = { cn: 'device-0042', dns: ['device-0042.corp.example'], email: ['device-0042@corp.example'] };

let signer: MdmSigningIdentity;
let stranger: MdmSigningIdentity;
let files: Map<string, string>;

beforeAll(async () => {
  signer = await signingIdentity('ECDSA-P256', 'mdm signer');
  stranger = await signingIdentity('ECDSA-P256', 'not the mdm');
  files = new Map([[SETTINGS.trust_bundle_path!, signer.pem]]);
});

const mint = (overrides: Partial<Parameters<typeof mintScepChallenge>[0]> = {}, by = signer) =>
  mintScepChallenge({
    key: by.key,
    certificate: by.der,
    audience: SETTINGS.audience!,
    issuer: 'mdm.corp.example',
    claims: { ...CLAIMS, compliant: true },
    lifetimeSeconds: 600,
    now: T0,
    ...overrides,
  });

const validPayload = (changes: Record<string, unknown> = {}) => ({
  ver: 1,
  iss: 'mdm.corp.example',
  aud: SETTINGS.audience,
  iat: T0_SECONDS,
  exp: T0_SECONDS + 600,
  jti: 'jti-0000000001',
  compliant: true,
  ...CLAIMS,
  ...changes,
});

interface Case {
  status: MdmChallengeStatus;
  title: string;
  run(): Promise<{ status: MdmChallengeStatus; message: string }>;
}

/** One case per status label: each runs on a fresh verifier and store. */
const CASES: Case[] = [
  {
    status: 'success',
    title: 'accepts a fresh, signed, compliant challenge naming exactly the CSR names',
    run: () => verifierWith(files).verifier.verify(input(mint())),
  },
  {
    status: 'signature_invalid',
    title: 'refuses a challenge signed by a certificate the profile does not trust',
    run: () => verifierWith(files).verifier.verify(input(mint({}, stranger))),
  },
  {
    status: 'expired',
    title: 'refuses a challenge past its exp plus the clock skew',
    run: async () => {
      const { verifier, clock } = verifierWith(files);
      clock.advance((600 + 61) * 1000);
      return verifier.verify(input(mint()));
    },
  },
  {
    status: 'not_yet_valid',
    title: 'refuses a challenge whose nbf is beyond the clock skew',
    run: () =>
      verifierWith(files).verifier.verify(input(signRaw(signer, validPayload({ nbf: T0_SECONDS + 120 })))),
  },
  {
    status: 'wrong_audience',
    title: 'refuses a challenge minted for another audience',
    run: () =>
      verifierWith(files).verifier.verify(input(mint({ audience: 'https://other.example.test/scep' }))),
  },
  {
    status: 'replay',
    title: 'refuses the second use of a challenge',
    run: async () => {
      const { verifier } = verifierWith(files);
      const token = mint();
      expect((await verifier.verify(input(token))).status).toBe('success');
      return verifier.verify(input(token));
    },
  },
  {
    status: 'rate_limited',
    title: 'locks out a device after ten failed challenges, even for a valid one',
    run: async () => {
      const { verifier } = verifierWith(files);
      for (let i = 0; i < 10; i++) {
        expect((await verifier.verify(input('not.a.challenge'))).status).toBe('malformed');
      }
      return verifier.verify(input(mint()));
    },
  },
  {
    status: 'claim_mismatch',
    title: 'refuses a CSR naming a DNS name the challenge does not',
    run: () =>
      verifierWith(files).verifier.verify({
        ...input(mint()),
        csr: {
          ...DEVICE,
          subjectAltNames: [...DEVICE.subjectAltNames, { type: 'dns', value: 'www.corp.example' }],
        },
      }),
  },
  {
    status: 'compliance_failed',
    title: 'refuses a challenge that reports the device as not compliant',
    run: () => verifierWith(files).verifier.verify(input(mint({ claims: { ...CLAIMS, compliant: false } }))),
  },
  {
    status: 'malformed',
    title: 'refuses a challengePassword that is not a compact JWS',
    run: () => verifierWith(files).verifier.verify(input('correct horse battery staple')),
  },
  {
    status: 'unknown_version',
    title: 'refuses a challenge of a claims version this server does not read',
    run: () => verifierWith(files).verifier.verify(input(signRaw(signer, validPayload({ ver: 2 })))),
  },
];

function input(challenge: string | undefined) {
  return { profileId: PROFILE, settings: SETTINGS, challenge, csr: DEVICE, remoteAddress: '192.0.2.7' };
}

describe('MDM challenge verification: one case per status label', () => {
  it('covers every label exactly once', () => {
    expect(CASES.map((c) => c.status).sort()).toEqual([...MDM_CHALLENGE_STATUSES].sort());
  });

  for (const c of CASES) {
    it(`${c.status}: ${c.title}`, async () => {
      const result = await c.run();
      expect(result.status).toBe(c.status);
      expect(result.message.length).toBeGreaterThan(0);
    });
  }
});

describe('MDM challenge verification: details', () => {
  it('counts each outcome per profile, every label present', async () => {
    const { verifier } = verifierWith(files);
    await verifier.verify(input(mint()));
    await verifier.verify(input('garbage'));
    await verifier.verify({ ...input(mint({ jti: 'another-jti-01' })), profileId: 'prof-other' });
    const counters = await verifier.counters(PROFILE);
    expect(Object.keys(counters)).toEqual([...MDM_CHALLENGE_STATUSES]);
    expect(counters).toMatchObject({ success: 1, malformed: 1, replay: 0, rate_limited: 0 });
    expect((await verifier.counters('prof-other')).success).toBe(1);
  });

  it('shares single use across instances on one store', async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryEphemeralStore({ clock });
    const a = verifierWith(files, { clock, store }).verifier;
    const b = verifierWith(files, { clock, store }).verifier;
    const token = mint();
    expect((await a.verify(input(token))).status).toBe('success');
    expect((await b.verify(input(token))).status).toBe('replay');
    expect((await b.counters(PROFILE)).replay).toBe(1);
  });

  it('does not use up a challenge that was refused for another reason', async () => {
    const { verifier } = verifierWith(files);
    const token = mint();
    const other: CsrNames = { commonNames: ['device-0043'], subjectAltNames: [] };
    expect((await verifier.verify({ ...input(token), csr: other })).status).toBe('claim_mismatch');
    expect((await verifier.verify(input(token))).status).toBe('success');
  });

  it("ends a challenge at iat plus the profile's maximum lifetime, whatever its exp", async () => {
    const { verifier, clock } = verifierWith(files);
    const token = mint({ lifetimeSeconds: 86_400 });
    clock.advance((3600 + 61) * 1000);
    const result = await verifier.verify({
      ...input(token),
      settings: { ...SETTINGS, max_lifetime_seconds: 3600 },
    });
    expect(result.status).toBe('expired');
    expect(result.message).toMatch(/maximum lifetime/);
  });

  it('accepts times within the clock skew', async () => {
    const { verifier, clock } = verifierWith(files);
    clock.advance((600 + 30) * 1000);
    expect((await verifier.verify(input(mint()))).status).toBe('success');
    const early = signRaw(signer, validPayload({ nbf: T0_SECONDS + 30, jti: 'jti-early-0001' }));
    clock.set(T0);
    expect((await verifier.verify(input(early))).status).toBe('success');
  });

  it('refuses a missing compliance claim when compliance is required, and accepts it otherwise', async () => {
    const { verifier } = verifierWith(files);
    const token = mint({ claims: CLAIMS });
    expect((await verifier.verify(input(token))).status).toBe('compliance_failed');
    const relaxed = { ...input(token), settings: { ...SETTINGS, require_compliance: false } };
    expect((await verifier.verify(relaxed)).status).toBe('success');
  });

  it('uses urn:certwright:scep:<profile id> as the audience when the profile names none', async () => {
    const { verifier } = verifierWith(files);
    const settings = { ...SETTINGS, audience: null };
    const token = mint({ audience: `urn:certwright:scep:${PROFILE}` });
    expect((await verifier.verify({ ...input(token), settings })).status).toBe('success');
    const wrong = mint({ jti: 'jti-wrong-aud-1' });
    expect((await verifier.verify({ ...input(wrong), settings })).status).toBe('wrong_audience');
  });

  it('refuses a tampered payload, an algorithm that does not fit the key, and a missing trust file', async () => {
    const { verifier } = verifierWith(files);
    const [h, , s] = mint().split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify(validPayload({ cn: 'admin' }))).toString('base64url')}.${s}`;
    expect((await verifier.verify(input(forged))).status).toBe('signature_invalid');
    const rsa = await signingIdentity('RSA-2048', 'rsa mdm');
    const rsaFiles = new Map([[SETTINGS.trust_bundle_path!, rsa.pem]]);
    const confused = signRaw(rsa, validPayload(), { alg: 'ES256' }, 'RS256');
    expect((await verifierWith(rsaFiles).verifier.verify(input(confused))).status).toBe('signature_invalid');
    const noFile = { ...input(mint()), settings: { ...SETTINGS, trust_bundle_path: '/nowhere.pem' } };
    expect((await verifier.verify(noFile)).status).toBe('signature_invalid');
  });

  it('verifies RS256, PS256, ES384 and EdDSA challenges from matching keys', async () => {
    const identities = [
      [await signingIdentity('RSA-2048', 'rsa'), 'RS256'],
      [await signingIdentity('RSA-2048', 'rsa-pss'), 'PS256'],
      [await signingIdentity('ECDSA-P384', 'p384'), 'ES384'],
      [await signingIdentity('Ed25519', 'ed'), 'EdDSA'],
    ] as const;
    const pem = identities.map(([id]) => id.pem).join('');
    const { verifier } = verifierWith(new Map([[SETTINGS.trust_bundle_path!, pem]]), { failureLimit: null });
    for (const [identity, algorithm] of identities) {
      const token = mint({ algorithm, jti: `jti-${algorithm}-0001` }, identity);
      expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).alg).toBe(algorithm);
      expect((await verifier.verify(input(token))).status, algorithm).toBe('success');
    }
  });

  it('refuses a challenge signed while the signing certificate was expired', async () => {
    const old = await signingIdentity('ECDSA-P256', 'old mdm', {
      notAfter: new Date('2026-06-01T00:00:00Z'),
    });
    const { verifier } = verifierWith(new Map([[SETTINGS.trust_bundle_path!, old.pem]]));
    expect((await verifier.verify(input(mint({}, old)))).status).toBe('signature_invalid');
  });

  it('matches names exactly: a missing SAN, a second common name or an extra name type differ', async () => {
    const { verifier } = verifierWith(files, { failureLimit: null });
    const cases: CsrNames[] = [
      { commonNames: ['device-0042'], subjectAltNames: [DEVICE.subjectAltNames[0]!] },
      { commonNames: ['device-0042', 'device-0043'], subjectAltNames: DEVICE.subjectAltNames },
      { commonNames: [], subjectAltNames: DEVICE.subjectAltNames },
      {
        commonNames: ['device-0042'],
        subjectAltNames: [
          ...DEVICE.subjectAltNames,
          { type: 'other', tag: 0xa0, der: Buffer.from([0xa0, 0]) },
        ],
      },
    ];
    for (const csr of cases) {
      expect((await verifier.verify({ ...input(mint()), csr })).status).toBe('claim_mismatch');
    }
    const caseInsensitive: CsrNames = {
      commonNames: ['device-0042'],
      subjectAltNames: [
        { type: 'dns', value: 'DEVICE-0042.corp.example' },
        { type: 'email', value: 'device-0042@CORP.example' },
      ],
    };
    expect((await verifier.verify({ ...input(mint()), csr: caseInsensitive })).status).toBe('success');
  });

  it('keeps a locked-out device out for the window, then lets it in again', async () => {
    const { verifier, clock } = verifierWith(files, { failureLimit: { limit: 2, windowMs: 60_000 } });
    await verifier.verify(input('x'));
    await verifier.verify(input('y'));
    expect((await verifier.verify(input(mint()))).status).toBe('rate_limited');
    const elsewhere: CsrNames = { commonNames: ['device-0099'], subjectAltNames: [] };
    const other = mint({ claims: { cn: 'device-0099', compliant: true }, jti: 'jti-device-0099' });
    expect((await verifier.verify({ ...input(other), csr: elsewhere })).status).toBe('success');
    clock.advance(61_000);
    expect((await verifier.verify(input(mint({ now: clock.now() })))).status).toBe('success');
  });
});

describe('MDM trust anchors', () => {
  it('keeps the previous anchors when a reload fails, and takes the new ones when it works', async () => {
    const trust = new Map(files);
    const { verifier } = verifierWith(trust);
    expect((await verifier.verify(input(mint()))).status).toBe('success');
    trust.set(SETTINGS.trust_bundle_path!, 'not PEM at all');
    await expect(verifier.reloadTrust(PROFILE, SETTINGS.trust_bundle_path!)).rejects.toMatchObject({
      reason: 'invalid_input',
    });
    trust.delete(SETTINGS.trust_bundle_path!);
    await expect(verifier.reloadTrust(PROFILE, SETTINGS.trust_bundle_path!)).rejects.toMatchObject({
      reason: 'unavailable',
    });
    expect((await verifier.verify(input(mint({ jti: 'jti-after-fail' })))).status).toBe('success');
    trust.set(SETTINGS.trust_bundle_path!, stranger.pem);
    const set = await verifier.reloadTrust(PROFILE, SETTINGS.trust_bundle_path!);
    expect(set.signers.map((s) => s.info.subject.text)).toEqual(['CN=not the mdm,O=certwright tests']);
    expect((await verifier.verify(input(mint({ jti: 'jti-after-ok' })))).status).toBe('signature_invalid');
  });

  it('makes every instance on the store re-read the file after one instance reloaded it', async () => {
    const trust = new Map(files);
    const clock = new ManualClock(T0);
    const store = new MemoryEphemeralStore({ clock });
    const a = verifierWith(trust, { clock, store }).verifier;
    const b = verifierWith(trust, { clock, store }).verifier;
    expect((await b.verify(input(mint()))).status).toBe('success');
    trust.set(SETTINGS.trust_bundle_path!, stranger.pem);
    await a.reloadTrust(PROFILE, SETTINGS.trust_bundle_path!);
    expect((await b.verify(input(mint({ jti: 'jti-stale-b01' })))).status).toBe('signature_invalid');
    expect((await b.verify(input(mint({ jti: 'jti-new-b0001' }, stranger)))).status).toBe('success');
  });

  it('refuses trust files with other PEM blocks or a certificate without digitalSignature', async () => {
    const { parseMdmSigners } = await import('../../src/scep/index.js');
    expect(() => parseMdmSigners('')).toThrow(/no PEM certificate/);
    expect(() => parseMdmSigners('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n')).toThrow(
      /not a CERTIFICATE/,
    );
    expect(parseMdmSigners(signer.pem + stranger.pem)).toHaveLength(2);
  });
});
