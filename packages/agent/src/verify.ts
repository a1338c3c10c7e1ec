import { createHash, X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import type { VerificationOutcome } from './connector.js';

export const fingerprint256 = (certPem: string): string =>
  createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex');

export interface Endpoint {
  host: string;
  port: number;
  /** SNI name sent in the handshake; defaults to none for an IP address. */
  serverName?: string;
}

/**
 * Connects with TLS and reads the leaf the endpoint serves. Trust is not checked here on
 * purpose: the question is which certificate is served, not whether this host trusts it.
 */
export function servedCertificate(
  ep: Endpoint,
  timeoutMs = 10_000,
): Promise<{ fingerprint256: string; serial: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: ep.host,
      port: ep.port,
      ...(ep.serverName ? { servername: ep.serverName } : {}),
      rejectUnauthorized: false,
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () => {
      const peer = socket.getPeerCertificate();
      socket.end();
      if (!peer?.raw) {
        reject(new Error(`${ep.host}:${ep.port} sent no certificate`));
        return;
      }
      resolve({
        fingerprint256: createHash('sha256').update(peer.raw).digest('hex'),
        serial: peer.serialNumber,
      });
    });
    socket.once('timeout', () =>
      socket.destroy(new Error(`no TLS handshake with ${ep.host}:${ep.port} in time`)),
    );
    socket.once('error', (e) =>
      reject(new Error(`TLS handshake with ${ep.host}:${ep.port} failed: ${e.message}`)),
    );
  });
}

/**
 * Compares the served leaf with the expected fingerprint. A reloading server keeps old workers
 * that may still accept a connection or two, so success needs `confirmations` handshakes in a
 * row that show the new leaf, and a mismatch counts only after `attempts` tries.
 */
export async function verifyEndpoint(
  ep: Endpoint,
  expected: string,
  attempts = 20,
  pauseMs = 250,
  confirmations = 3,
): Promise<VerificationOutcome> {
  let last: VerificationOutcome = { ok: false, detail: 'not checked' };
  let streak = 0;
  for (let i = 0; i < attempts; i++) {
    try {
      const served = await servedCertificate(ep);
      if (served.fingerprint256 === expected) {
        streak += 1;
        last = {
          ok: true,
          detail: `${ep.host}:${ep.port} serves the deployed certificate (serial ${served.serial})`,
          servedFingerprint256: served.fingerprint256,
          servedSerial: served.serial,
        };
        if (streak >= confirmations) return last;
        continue;
      }
      streak = 0;
      last = {
        ok: false,
        detail: `${ep.host}:${ep.port} serves another certificate (serial ${served.serial})`,
        servedFingerprint256: served.fingerprint256,
        servedSerial: served.serial,
      };
    } catch (error) {
      streak = 0;
      last = { ok: false, detail: (error as Error).message };
    }
    if (i + 1 < attempts) await new Promise((r) => setTimeout(r, pauseMs));
  }
  return last.ok ? { ...last, ok: false, detail: `${last.detail}, but not consistently` } : last;
}
