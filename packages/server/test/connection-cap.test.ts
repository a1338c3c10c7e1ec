import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { createHandler } from '@certwright/api';
import { silentLogger } from '@certwright/core';
import { afterEach, describe, expect, it } from 'vitest';
import { startTlsServer, type TlsServer } from '../src/tls-server.js';
import { makeTestPki } from './support/openssl-pki.js';

/**
 * SVC_MAX_CONNECTIONS_PER_CLIENT: one client address cannot hold every socket. Connections past
 * the cap are closed before their TLS handshake; another address still connects; a closed
 * connection frees its place; a trusted proxy's address is not capped.
 */

const pki = makeTestPki(['server']);
const ca = readFileSync(pki.ca, 'utf8');
const CAP = 3;
let tls: TlsServer | undefined;
const sockets: TLSSocket[] = [];

async function listen(uncapped?: (address: string) => boolean): Promise<TlsServer> {
  tls = await startTlsServer({
    handler: createHandler({ auth: { type: 'none' } }),
    certPath: pki.issued.server!.cert,
    keyPath: pki.issued.server!.key,
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
    maxConnectionsPerClient: CAP,
    ...(uncapped ? { uncappedAddress: uncapped } : {}),
  });
  return tls;
}

/** A TLS connection from `from` (a loopback address): 'open' once the handshake is done, else 'closed'. */
function open(port: number, from = '127.0.0.1'): Promise<'open' | 'closed'> {
  return new Promise((resolve) => {
    const socket = connect({
      socket: tcpConnect({ host: '127.0.0.1', port, localAddress: from }),
      servername: 'localhost',
      ca,
    });
    sockets.push(socket);
    socket.once('secureConnect', () => resolve('open'));
    socket.once('error', () => resolve('closed'));
    socket.once('close', () => resolve('closed'));
  });
}

/** Polls `check` until it holds or the deadline passes (no fixed sleeps). */
async function eventually(check: () => Promise<boolean>, deadlineMs = 10_000): Promise<boolean> {
  const end = performance.now() + deadlineMs;
  while (performance.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return false;
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await tls?.close(0);
  tls = undefined;
});

describe('per-client cap on concurrent TLS connections', () => {
  it('closes connections past the cap; another client connects; a closed one frees its place', async () => {
    const { port } = await listen();
    const held = [];
    for (let i = 0; i < CAP; i++) held.push(await open(port));
    expect(held).toEqual(Array(CAP).fill('open'));
    expect(await open(port)).toBe('closed');
    // Another address is not affected by this one's connections.
    expect(await open(port, '127.0.0.2')).toBe('open');
    // One of the first client's connections ends: its place is free again.
    sockets[0]!.destroy();
    const freed = await eventually(async () => {
      if ((await open(port)) === 'open') return true;
      return false;
    });
    expect(freed).toBe(true);
  });

  it('does not cap a trusted proxy, whose address every client behind it shares', async () => {
    const { port } = await listen((address) => address === '127.0.0.1');
    const held = [];
    for (let i = 0; i < CAP + 3; i++) held.push(await open(port));
    expect(held).toEqual(Array(CAP + 3).fill('open'));
  });
});
