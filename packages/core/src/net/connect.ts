import type { LookupFunction } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import { type CertwrightError, fail, isCertwrightError } from '../errors.js';

/**
 * Opening sockets to addresses the guard already checked: TCP first, then TLS over it, so the
 * two failures are told apart and timed separately. Internal to net/.
 */

/** Certificates to trust instead of the system roots (PEM text or DER). */
export type TrustAnchors = string | Uint8Array | readonly (string | Uint8Array)[];

export interface TlsSettings {
  /** SNI and the name the certificate is verified against; none for an address literal. */
  servername?: string;
  /** ALPN protocols offered, e.g. `['acme-tls/1']` or `['http/1.1']`. */
  alpn?: readonly string[];
  /** Verify the chain and the name (default true). */
  verify?: boolean;
  ca?: TrustAnchors;
  /** Oldest protocol offered; default Node's (TLS 1.2). Observers (network scans) offer TLS 1.0. */
  minVersion?: tls.SecureVersion;
}

/** A point in time after which the current step is abandoned with `timed_out`. */
export class Deadline {
  constructor(
    readonly at: number,
    private readonly what: string,
  ) {}

  static after(ms: number, what: string, cap?: Deadline): Deadline {
    const at = performance.now() + ms;
    return cap && cap.at < at ? cap : new Deadline(at, what);
  }

  timedOut(): CertwrightError {
    return fail('timed_out', this.what);
  }

  /** Settles like `promise`, or rejects with `timed_out` at the deadline after calling `abandon`. */
  race<T>(promise: Promise<T>, abandon: () => void): Promise<T> {
    const ms = this.at - performance.now();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          abandon();
          reject(this.timedOut());
        },
        Math.max(0, ms),
      );
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,60}$/.test(code) ? code : 'unknown error';
};

export function connectionFailure(host: string, port: number, error: unknown): CertwrightError {
  if (isCertwrightError(error)) return error;
  return fail('connection_failed', `could not connect to '${host}' port ${port} (${codeOf(error)})`, {
    cause: error,
  });
}

export function tlsFailure(host: string, error: unknown): CertwrightError {
  if (isCertwrightError(error)) return error;
  return fail('tls_failed', `TLS handshake with '${host}' failed (${codeOf(error)})`, { cause: error });
}

/** Refuses any name lookup: sockets here only ever open checked address literals. */
const noLookup: LookupFunction = (hostname, _options, callback) => {
  callback(Object.assign(new Error(`lookup of '${hostname}' refused`), { code: 'ENOLOOKUP' }), '', 4);
};

function tcpOnce(address: string, port: number): { socket: net.Socket; connected: Promise<net.Socket> } {
  const socket = net.connect({ host: address, port, lookup: noLookup });
  const connected = new Promise<net.Socket>((resolve, reject) => {
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', reject);
  });
  return { socket, connected };
}

/**
 * Connects to the first of `addresses` that accepts, in order, until `deadline`. Returns the
 * socket and the address reached; `connection_failed` when none accepted.
 */
export async function connectTcp(
  host: string,
  addresses: readonly string[],
  port: number,
  deadline: Deadline,
): Promise<{ socket: net.Socket; address: string }> {
  let last: unknown;
  for (const address of addresses) {
    const attempt = tcpOnce(address, port);
    try {
      const socket = await deadline.race(attempt.connected, () => attempt.socket.destroy());
      return { socket, address };
    } catch (error) {
      attempt.socket.destroy();
      if (isCertwrightError(error)) throw error; // the deadline: no time for the next address
      last = error;
    }
  }
  throw connectionFailure(host, port, last);
}

const toBuffer = (value: string | Uint8Array): string | Buffer =>
  typeof value === 'string' ? value : Buffer.from(value);

/** Runs the TLS handshake over a connected socket; `tls_failed` when it does not complete. */
export async function handshake(
  host: string,
  socket: net.Socket,
  settings: TlsSettings,
  deadline: Deadline,
): Promise<tls.TLSSocket> {
  const ca = settings.ca;
  const secure = tls.connect({
    socket,
    // The name the certificate is verified against: the SNI name, else the address literal.
    host: settings.servername ?? host,
    ...(settings.servername ? { servername: settings.servername } : {}),
    ...(settings.alpn ? { ALPNProtocols: [...settings.alpn] } : {}),
    ...(ca === undefined
      ? {}
      : { ca: Array.isArray(ca) ? ca.map(toBuffer) : toBuffer(ca as string | Uint8Array) }),
    rejectUnauthorized: settings.verify ?? true,
    ...(settings.minVersion
      ? {
          minVersion: settings.minVersion,
          // OpenSSL's default security level refuses TLS 1.0/1.1 whatever minVersion says;
          // level 0 lets an observer see what an old endpoint serves (nothing is trusted here).
          ...(settings.minVersion === 'TLSv1' || settings.minVersion === 'TLSv1.1'
            ? { ciphers: 'DEFAULT@SECLEVEL=0' }
            : {}),
        }
      : {}),
  });
  const done = new Promise<tls.TLSSocket>((resolve, reject) => {
    secure.once('secureConnect', () => {
      secure.removeAllListeners('error');
      resolve(secure);
    });
    secure.once('error', (error) => reject(tlsFailure(host, error)));
    secure.once('close', () => reject(tlsFailure(host, { code: 'ECONNRESET' })));
  });
  try {
    return await deadline.race(done, () => secure.destroy());
  } catch (error) {
    secure.destroy();
    throw error;
  }
}
