/**
 * The SCEP probe against a real SCEP server: micromdm `scepserver` (Debian package `scep`)
 * with a depot of its own in a temporary directory. scepserver listens on every interface, so
 * it runs in a network namespace that has nothing but loopback, and the test reaches it through
 * a bridge on 127.0.0.1 (a Unix socket in between, served by socat inside the namespace). The
 * probe reaches 127.0.0.1 only through the test-only allowance of the address guard: a client
 * made with the loopback opt-in and a loopback allowlist entry, which no setting of the server
 * can build. What the probe reports is compared with what openssl reads from the depot.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createServices,
  ManualClock,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
} from '@certwright/core';
import { createOutboundClient, parseAllowlist } from '@certwright/core/net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../packages/api/src/index.js';
import type { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../packages/storage-pg/src/testing.js';

const API_KEY = 'scep-probe-interop-key-0123456789';
/** scepserver's port inside its namespace; nothing outside the namespace can see it. */
const INNER_PORT = '8080';

let dir: string;
let scepserver: ChildProcess;
let bridge: net.Server;
let origin: string;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
const clock = new ManualClock(new Date());

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8' }).trim();

/** Resolves once `check` resolves true, polling; rejects with the last failure after `attempts`. */
async function until(check: () => Promise<boolean>, what: string, attempts = 100): Promise<void> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not come up: ${String(last)}`);
}

/**
 * A network namespace of its own: as root with CAP_SYS_ADMIN (`--net`), else inside a user
 * namespace (`--map-root-user --net`), which containers without that capability often allow.
 */
function namespaceFlags(): string[] {
  for (const flags of [['--net'], ['--map-root-user', '--net']]) {
    try {
      execFileSync('unshare', [...flags, 'true'], { stdio: 'ignore' });
      return flags;
    } catch {
      // try the next way
    }
  }
  throw new Error(
    'unshare cannot create a network namespace here; scepserver must not listen on every interface',
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cw-scepserver-'));
  const depot = join(dir, 'depot');
  const socket = join(dir, 'scep.sock');
  execFileSync('scepserver', [
    'ca',
    '-init',
    '-depot',
    depot,
    '-keySize',
    '2048',
    '-organization',
    'certwright interop',
    '-years',
    '2',
  ]);
  scepserver = spawn(
    'unshare',
    [
      ...namespaceFlags(),
      '--',
      'sh',
      '-c',
      'ip link set lo up && { socat "UNIX-LISTEN:$1,fork" "TCP:127.0.0.1:$2" & } && exec scepserver -depot "$3" -port "$2"',
      'sh',
      socket,
      INNER_PORT,
      depot,
    ],
    { detached: true, stdio: 'ignore' },
  );
  bridge = net.createServer((client) => {
    const upstream = net.connect({ path: socket });
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve) => bridge.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(bridge.address() as net.AddressInfo).port}`;
  await until(async () => (await fetch(`${origin}/scep?operation=GetCACaps`)).status === 200, 'scepserver');

  storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(SecretBox.generateKey()), clock });
  services = createServices(
    { storage, clock, logger: silentLogger },
    {
      scepProbe: {
        client: createOutboundClient({ loopback: 'when-listed', allowlist: parseAllowlist('127.0.0.0/8') }),
      },
    },
  );
}, 60_000);

afterAll(async () => {
  if (scepserver?.pid) {
    try {
      process.kill(-scepserver.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await new Promise<void>((resolve) => (bridge ? bridge.close(() => resolve()) : resolve()));
  await storage?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('SCEP probe of micromdm scepserver', () => {
  it('records the capabilities it advertises and the CA certificate of its depot', async () => {
    const result = await services.scepProbes.probe(SYSTEM_ACTOR, { url: `${origin}/scep` });
    expect(result.error).toBeNull();
    expect(result.reachable).toBe(true);

    const caps = (await (await fetch(`${origin}/scep?operation=GetCACaps`)).text())
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    expect(result.capabilities).toEqual(caps);
    expect(result.supports_post).toBe(caps.includes('POSTPKIOperation') || caps.includes('SCEPStandard'));
    expect(result.supports_renewal).toBe(caps.includes('Renewal'));
    expect(result.supports_sha256).toBe(caps.includes('SHA-256') || caps.includes('SCEPStandard'));
    expect(result.supports_aes).toBe(caps.includes('AES') || caps.includes('SCEPStandard'));

    const ca = join(dir, 'depot', 'ca.pem');
    expect(result.ca_subject).toBe(
      openssl('x509', '-in', ca, '-noout', '-subject', '-nameopt', 'RFC2253').replace(/^subject=/, ''),
    );
    expect(result.ca_issuer).toBe(
      openssl('x509', '-in', ca, '-noout', '-issuer', '-nameopt', 'RFC2253').replace(/^issuer=/, ''),
    );
    const date = (flag: string) =>
      new Date(openssl('x509', '-in', ca, '-noout', flag).replace(/^not(Before|After)=/, '')).toISOString();
    expect(result.ca_not_before?.toISOString()).toBe(date('-startdate'));
    expect(result.ca_not_after?.toISOString()).toBe(date('-enddate'));
    const bits = /Public-Key: \((\d+) bit\)/.exec(openssl('x509', '-in', ca, '-noout', '-text'))?.[1];
    expect(result.key_algorithm).toBe(`RSA ${bits}`);
    expect(result.chain_length).toBe(1);
    expect(result.expired).toBe(false);
    expect(result.days_to_expiry).toBe(
      Math.floor((result.ca_not_after!.getTime() - clock.now().getTime()) / 86_400_000),
    );
  });

  it('answers the same through the REST route and lists it first', async () => {
    const handler = createHandler({
      auth: { type: 'api-key', secret: API_KEY },
      services,
      logger: silentLogger,
    });
    clock.advance(1000);
    const call = (method: string, path: string, body?: unknown) =>
      handler(
        new Request(`https://localhost:8443${path}`, {
          method,
          headers: {
            authorization: `Bearer ${API_KEY}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
        }),
        { remoteAddress: '127.0.0.1' },
      );
    const res = await call('POST', '/api/v1/network-scan/scep-probe', { url: `${origin}/scep` });
    expect(res.status).toBe(200);
    const probe = await res.json();
    expect(probe).toMatchObject({ reachable: true, error: null, chain_length: 1 });
    const list = await (await call('GET', '/api/v1/network-scan/scep-probes?limit=1')).json();
    expect(list.data[0]).toEqual(probe);
  });

  it('refuses the same server through the guard as the server builds it', async () => {
    const guarded = createServices({ storage, clock, logger: silentLogger });
    const result = await guarded.scepProbes.probe(SYSTEM_ACTOR, { url: `${origin}/scep` });
    expect(result).toMatchObject({ reachable: false, ca_subject: null });
    expect(result.error).toMatch(/loopback/);
  });
});
