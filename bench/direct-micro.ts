/**
 * The JS cost of the direct path's connection layer per request, without TLS or the network
 * (not a test; no thresholds): a stand-in socket receives a 2-byte OCSP POST as wrk sends it and
 * records the answer written; a direct entry answers fixed bytes. Prints µs of CPU per request
 * for attachDirectConnections and for a bare 'data' → write listener on the same stand-in, and
 * for the whole handler's direct entry (createHandler on in-memory PGlite, the server's
 * metrics, a cached OCSP answer): the JS a cached answer costs above TLS and the socket.
 * Run: node --conditions=source --import tsx bench/direct-micro.ts [requests=300000]
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import { createHandler } from '../packages/api/src/index.js';
import {
  createServices,
  type DirectPath,
  SecretBox,
  silentLogger,
  systemClock,
} from '../packages/core/src/index.js';
import { attachDirectConnections } from '../packages/server/src/direct-connections.js';
import { createMetrics } from '../packages/server/src/metrics.js';
import { createPgliteStorage } from '../packages/storage-pg/src/index.js';
import { issueOcspFixture } from './support/ocsp-fixture.js';

const N = Number(process.argv[2] ?? 300_000);
const BODY = Buffer.alloc(480, 7);
const requestBytes = (path: string, body: Uint8Array) =>
  Buffer.concat([
    Buffer.from(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:8443\r\nContent-Length: ${body.length}\r\nContent-Type: application/ocsp-request\r\n\r\n`,
      'latin1',
    ),
    body,
  ]);

/** What DirectConnection touches of a net.Socket. */
class StandIn extends EventEmitter {
  written = 0;
  writableNeedDrain = false;
  localPort = 8443;
  remoteAddress = '127.0.0.1';
  setNoDelay() {}
  setTimeout() {}
  resume() {}
  pause() {}
  unshift() {}
  end() {}
  destroy() {}
  onWrite: () => void = () => {};
  write(b: Buffer) {
    this.written += b.length;
    this.onWrite();
    return true;
  }
}

async function run(label: string, request: Buffer, answerBytes: number, attach: (s: StandIn) => void) {
  const socket = new StandIn();
  attach(socket);
  // One request in flight, as wrk sends them: the next goes when the answer was written.
  const once = () =>
    new Promise<void>((resolve) => {
      socket.onWrite = resolve;
      socket.emit('data', request);
    });
  for (let i = 0; i < 20_000; i++) await once();
  const before = socket.written;
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await once();
  const used = process.cpuUsage(t0);
  if (socket.written - before < N * answerBytes) throw new Error(`${label}: answers missing`);
  console.log(`${label}: ${((used.user + used.system) / N).toFixed(2)} µs CPU per request`);
}

/** The handler on in-memory PGlite and the bytes of an OCSP POST for the fixture's certificate. */
async function ocspSetUp() {
  const storage = await createPgliteStorage(
    { memory: true },
    { secretBox: new SecretBox(randomBytes(32)), clock: systemClock },
  );
  await storage.migrate();
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const { issuerId, body } = await issueOcspFixture(services);
  const metrics = createMetrics({ worker: '1' });
  const handler = createHandler({
    auth: { type: 'none' },
    services,
    rateLimits: { pki: 0 },
    onResponse: (event) => metrics.observe(event),
  });
  return { handler, request: requestBytes(`/.well-known/pki/ocsp/${issuerId}`, body) };
}

const server = createServer();
const direct: DirectPath = {
  bodyLimit: () => 4096,
  answer: async () => ({ status: 200, headers: { 'content-type': 'application/ocsp-response' }, body: BODY }),
};
attachDirectConnections({ server, event: 'connection', direct });
const fixed = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\n\r\n'), BODY]);
console.log(
  `direct-micro: node ${process.version}, ${N} requests; ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`,
);
const ocsp = await ocspSetUp();
const full = createServer();
attachDirectConnections({ server: full, event: 'connection', direct: ocsp.handler.direct });
const fixedRequest = requestBytes('/.well-known/pki/ocsp/iss_0123456789abcdef', Uint8Array.from([0x30, 0]));
for (let round = 0; round < 3; round++) {
  await run('bare data → write', fixedRequest, BODY.length, (s) => s.on('data', () => s.write(fixed)));
  await run('attachDirectConnections, fixed answer', fixedRequest, BODY.length, (s) =>
    server.emit('connection', s),
  );
  await run('attachDirectConnections, createHandler cached OCSP', ocsp.request, 300, (s) =>
    full.emit('connection', s),
  );
}
