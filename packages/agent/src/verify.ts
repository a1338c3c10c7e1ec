import { createHash, X509Certificate } from 'node:crypto';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import type { VerificationOutcome } from './connector.js';

export const fingerprint256 = (certPem: string): string =>
  createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex');

export interface Endpoint {
  host: string;
  port: number;
  /** SNI name sent in the handshake; defaults to none for an IP address. */
  serverName?: string;
  /** Plain-text upgrade before the handshake: `smtp` is the STARTTLS of RFC 3207. */
  starttls?: 'smtp';
}

/** Longest SMTP reply read before STARTTLS; a server sending more is not an SMTP server. */
const MAX_SMTP_REPLY = 16 * 1024;

/**
 * Reads one complete SMTP reply (RFC 5321 section 4.2: lines `code-text`, the last one
 * `code text`) and returns its code and the text of all lines.
 */
function smtpReply(socket: Socket): Promise<{ code: number; lines: string[] }> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('end', onEnd);
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const onEnd = () => {
      cleanup();
      reject(new Error('the SMTP server closed the connection'));
    };
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      if (buffered.length > MAX_SMTP_REPLY) {
        cleanup();
        reject(new Error('the SMTP reply is too long'));
        return;
      }
      const lines = buffered.split('\r\n');
      const complete = lines.slice(0, -1);
      const last = complete.at(-1);
      if (last === undefined || !/^\d{3}( |$)/.test(last)) return;
      cleanup();
      socket.pause();
      resolve({ code: Number(last.slice(0, 3)), lines: complete.map((l) => l.slice(4)) });
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.once('end', onEnd);
    socket.resume();
  });
}

/** Opens a TCP connection and upgrades it with SMTP STARTTLS (RFC 3207); resolves when TLS may start. */
async function smtpStartTls(ep: Endpoint, timeoutMs: number): Promise<Socket> {
  const socket = connectTcp({ host: ep.host, port: ep.port });
  socket.setTimeout(timeoutMs, () =>
    socket.destroy(new Error(`no SMTP answer from ${ep.host}:${ep.port} in time`)),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const expect = async (code: number, step: string) => {
      const reply = await smtpReply(socket);
      if (reply.code !== code) throw new Error(`${step} was answered ${reply.code}`);
      return reply;
    };
    await expect(220, 'the SMTP greeting');
    socket.write('EHLO certwright-agent\r\n');
    const ehlo = await expect(250, 'EHLO');
    if (!ehlo.lines.some((l) => l.toUpperCase().startsWith('STARTTLS')))
      throw new Error('the SMTP server does not offer STARTTLS');
    socket.write('STARTTLS\r\n');
    await expect(220, 'STARTTLS');
    socket.setTimeout(0);
    return socket;
  } catch (error) {
    socket.destroy();
    throw new Error(`SMTP STARTTLS with ${ep.host}:${ep.port} failed: ${(error as Error).message}`);
  }
}

/**
 * Connects with TLS and reads the leaf the endpoint serves. Trust is not checked here on
 * purpose: the question is which certificate is served, not whether this host trusts it.
 */
export function servedCertificate(
  ep: Endpoint,
  timeoutMs = 10_000,
): Promise<{ fingerprint256: string; serial: string }> {
  if (ep.starttls === 'smtp') {
    return smtpStartTls(ep, timeoutMs).then((plain) => handshake(ep, timeoutMs, plain));
  }
  return handshake(ep, timeoutMs);
}

function handshake(
  ep: Endpoint,
  timeoutMs: number,
  plain?: Socket,
): Promise<{ fingerprint256: string; serial: string }> {
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = connect({
      ...(plain ? { socket: plain } : { host: ep.host, port: ep.port }),
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
