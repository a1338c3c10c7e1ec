import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '../../packages/core/src/pki/index.js';

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export interface Pebble {
  child: ChildProcess;
  directoryUrl: string;
  /** Port of pebble's management interface (roots, certificate status) on 127.0.0.1. */
  managementPort: number;
  /** The PEM of pebble's TLS certificate (self-signed here; the package ships none). */
  ca: string;
  stop(): Promise<void>;
}

export interface PebbleOptions {
  binary?: string;
  /**
   * Validate for real instead of accepting every challenge: http-01 on `httpPort` of the name,
   * names resolved (and dns-01 TXT read) through `dnsServer` (pebble-challtestsrv).
   */
  validation?: { httpPort: number; dnsServer: string };
  /** PEBBLE_WFE_NONCEREJECT: the percentage of nonces refused at random (default 0). */
  nonceRejectPercent?: number;
}

/**
 * Debian's pebble (`/usr/bin/pebble`) on loopback ports chosen free, with its own config and
 * TLS certificate in a temporary directory. Without `validation` every challenge is valid at
 * once (PEBBLE_VA_ALWAYS_VALID); PEBBLE_VA_NOSLEEP always; authorizations are never reused
 * (PEBBLE_AUTHZREUSE=0), so every order does the whole flow.
 */
export async function startPebble(options: PebbleOptions = {}): Promise<Pebble> {
  const binary = options.binary ?? '/usr/bin/pebble';
  const dir = await mkdtemp(join(tmpdir(), 'cw-bench-pebble-'));
  const tlsKey = await generateKeyPair('ECDSA-P256');
  const ca = certificateToPem(
    createSelfSignedCertificate(
      {
        subject: 'CN=127.0.0.1',
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 86_400_000),
        subjectAltNames: [{ type: 'ip', value: '127.0.0.1' }],
        basicConstraints: { ca: true },
      },
      tlsKey.privateKey,
    ).der,
  );
  await writeFile(join(dir, 'cert.pem'), ca);
  await writeFile(join(dir, 'key.pem'), exportPkcs8Pem(tlsKey.privateKey));
  const port = await freePort();
  const managementPort = await freePort();
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${port}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: join(dir, 'cert.pem'),
      privateKey: join(dir, 'key.pem'),
      // Without validation never contacted: every challenge is valid at once.
      httpPort: options.validation?.httpPort ?? (await freePort()),
      tlsPort: await freePort(),
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
    },
  };
  await writeFile(join(dir, 'pebble-config.json'), JSON.stringify(config));
  const args = ['-config', join(dir, 'pebble-config.json')];
  if (options.validation) args.push('-dnsserver', options.validation.dnsServer);
  const child = spawn(binary, args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      ...(options.validation ? {} : { PEBBLE_VA_ALWAYS_VALID: '1' }),
      PEBBLE_VA_NOSLEEP: '1',
      PEBBLE_WFE_NONCEREJECT: String(options.nonceRejectPercent ?? 0),
      PEBBLE_AUTHZREUSE: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listening = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      // Pebble logs every request: keep the start-up, drop the rest (never leave the pipe full).
      if (output.length < 65_536) output += d;
      if (output.includes('Listening on')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`pebble exited with ${code}:\n${output}`)));
    setTimeout(() => reject(new Error(`pebble did not start:\n${output}`)), 30_000).unref();
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await listening;
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, directoryUrl: `https://127.0.0.1:${port}/dir`, managementPort, ca, stop };
}
