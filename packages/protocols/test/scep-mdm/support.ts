import { createHash, type KeyObject } from 'node:crypto';
import { ManualClock, MemoryEphemeralStore, silentLogger } from '@certwright/core';
import {
  createSelfSignedCertificate,
  generateKeyPair,
  type KeyAlgorithm,
  pemEncode,
  signJws,
} from '@certwright/core/pki';
import {
  type MdmChallengeAlgorithm,
  type MdmChallengeSettings,
  MdmChallengeVerifier,
  type MdmVerifierOptions,
} from '../../src/scep/index.js';

export const T0 = new Date('2026-11-27T12:00:00Z');
export const T0_SECONDS = T0.getTime() / 1000;

export interface MdmSigningIdentity {
  key: KeyObject;
  der: Buffer;
  pem: string;
}

/** An MDM signing certificate as an MDM vendor ships one: a self-signed leaf for digital signatures. */
export async function signingIdentity(
  alg: KeyAlgorithm = 'ECDSA-P256',
  name = 'mdm signer',
  validity: { notBefore?: Date; notAfter?: Date } = {},
): Promise<MdmSigningIdentity> {
  const { privateKey } = await generateKeyPair(alg);
  const cert = createSelfSignedCertificate(
    {
      subject: `CN=${name},O=certwright tests`,
      notBefore: validity.notBefore ?? new Date('2026-01-01T00:00:00Z'),
      notAfter: validity.notAfter ?? new Date('2028-01-01T00:00:00Z'),
      keyUsage: ['digitalSignature'],
    },
    privateKey,
  );
  return { key: privateKey, der: cert.der, pem: pemEncode('CERTIFICATE', cert.der) };
}

/** A compact JWS of any header and payload, signed as the verifier expects (for tokens the minting tool refuses to make). */
export function signRaw(
  signer: MdmSigningIdentity,
  payload: unknown,
  header: Record<string, unknown> = {},
  alg: MdmChallengeAlgorithm = 'ES256',
): string {
  const fullHeader = {
    alg,
    typ: 'scep-challenge+jwt',
    'x5t#S256': createHash('sha256').update(signer.der).digest('base64url'),
    ...header,
  };
  const input = `${b64(JSON.stringify(fullHeader))}.${b64(JSON.stringify(payload))}`;
  return `${input}.${signJws(alg, signer.key, Buffer.from(input)).toString('base64url')}`;
}

const b64 = (text: string) => Buffer.from(text).toString('base64url');

export const SETTINGS: MdmChallengeSettings = {
  trust_bundle_path: '/mdm/trust.pem',
  audience: 'https://pki.example.test/scep/devices',
  max_lifetime_seconds: 3600,
  require_compliance: true,
};

/** A verifier on a manual clock and an in-memory store, reading trust files from `files`. */
export function verifierWith(
  files: Map<string, string>,
  options: MdmVerifierOptions & { clock?: ManualClock; store?: MemoryEphemeralStore } = {},
) {
  const clock = options.clock ?? new ManualClock(T0);
  const store = options.store ?? new MemoryEphemeralStore({ clock });
  const verifier = new MdmChallengeVerifier(
    { clock, ephemeral: store, logger: silentLogger },
    {
      readTrustFile: async (path) => {
        const text = files.get(path);
        if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
        return text;
      },
      ...options,
    },
  );
  return { verifier, clock, store };
}
