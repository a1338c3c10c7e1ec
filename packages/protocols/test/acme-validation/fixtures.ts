import type { KeyObject } from 'node:crypto';
import { isCertwrightError } from '@certwright/core';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
  type RawExtension,
  type SubjectAltName,
} from '@certwright/core/pki';
import { acmeIdentifierExtension } from '../../src/acme/index.js';

export const THUMBPRINT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';
export const keyAuthorization = (token: string): string => `${token}.${THUMBPRINT}`;

/** The reason of a rejected promise, or 'resolved'; fails the test on a non-CertwrightError. */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    if (!isCertwrightError(error)) throw error;
    return error.reason;
  }
}

/** The rejection itself, for message checks. */
export async function rejection(promise: Promise<unknown>): Promise<{ reason: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isCertwrightError(error)) return { reason: error.reason, message: error.message };
    throw error;
  }
  throw new Error('expected a rejection');
}

let key: Promise<KeyObject> | undefined;
const challengeKey = (): Promise<KeyObject> => {
  key ??= generateKeyPair('ECDSA-P256').then((pair) => pair.privateKey);
  return key;
};

export interface AcmeCertificateSpec {
  sans: SubjectAltName[];
  /** The key authorization whose digest the acmeIdentifier carries. */
  keyAuthorization: string;
  /** Default 'critical'. */
  extension?: 'critical' | 'non-critical' | 'none';
  /** Replaces the acmeIdentifier value (the DER inside extnValue). */
  value?: Uint8Array;
}

/** A tls-alpn-01 certificate as an ACME client would make it (RFC 8737 §3), or a flawed one. */
export async function acmeCertificate(
  spec: AcmeCertificateSpec,
): Promise<{ der: Buffer; cert: string; key: string }> {
  const privateKey = await challengeKey();
  const acme = acmeIdentifierExtension(spec.keyAuthorization);
  const extension: RawExtension = {
    ...acme,
    critical: spec.extension !== 'non-critical',
    ...(spec.value ? { value: spec.value } : {}),
  };
  const now = Date.now();
  const issued = createSelfSignedCertificate(
    {
      subject: 'CN=ACME challenge',
      notBefore: new Date(now - 3_600_000),
      notAfter: new Date(now + 7 * 86_400_000),
      subjectAltNames: spec.sans,
      extraExtensions: spec.extension === 'none' ? [] : [extension],
    },
    privateKey,
  );
  return { der: issued.der, cert: certificateToPem(issued.der), key: exportPkcs8Pem(privateKey) };
}
