/**
 * The agent loop against a scripted HTTPS server: a malformed work answer and server errors
 * back off and are reported in the next heartbeat's failures; a job for a target type without
 * a connector is reported Failed with the reason; stop() ends the loop with "stopped".
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertwrightAgent, MalformedWorkError } from '../src/index.js';
import { makeServerTls } from './support/server.js';

interface Seen {
  path: string;
  body: unknown;
}
let server: Server;
let url: string;
let ca: string;
const seen: Seen[] = [];
let workAnswers: { status: number; body: string }[] = [];

beforeAll(async () => {
  const tls = makeServerTls();
  ca = readFileSync(tls.ca, 'utf8');
  server = createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += d;
    });
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body: text ? JSON.parse(text) : undefined });
      if (req.url?.endsWith('/work')) {
        const next = workAnswers.shift() ?? { status: 200, body: '{"jobs":[],"awaiting_csr":[]}' };
        res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"ag-1"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const agent = () =>
  new CertwrightAgent({
    connection: { serverUrl: url, agentId: 'ag-1', apiKey: 'cwa_test', caBundlePem: ca },
    connectors: [],
    heartbeatIntervalMs: 0,
    pollIntervalMs: 20,
    maxBackoffMs: 40,
  });

describe('agent loop', { timeout: 60_000 }, () => {
  it('refuses a malformed work answer and reports the failure in the next heartbeat', async () => {
    seen.length = 0;
    workAnswers = [
      { status: 200, body: '{"jobs":"nope"}' },
      { status: 503, body: '{"detail":"overloaded"}' },
    ];
    const a = agent();
    await expect(a.tick()).rejects.toBeInstanceOf(MalformedWorkError);
    const running = a.run();
    for (let i = 0; i < 200 && seen.filter((s) => s.path.endsWith('/heartbeat')).length < 4; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    a.stop();
    await expect(running).resolves.toBe('stopped');
    const heartbeats = seen
      .filter((s) => s.path.endsWith('/heartbeat'))
      .map((s) => s.body as { failures: string[] });
    expect(heartbeats.some((h) => h.failures.some((f) => f.includes('answered 503: overloaded')))).toBe(true);
    // Once the server answers again, the failures clear.
    expect(heartbeats.at(-1)!.failures).toEqual([]);
    expect(a.status().state).toBe('stopped');
  });

  it('reports a job for a target type it has no connector for as Failed, naming the type', async () => {
    seen.length = 0;
    workAnswers = [
      {
        status: 200,
        body: JSON.stringify({
          jobs: [
            {
              job: {
                id: 'jb-1',
                type: 'Validation',
                status: 'Running',
                payload: { kind: 'connection_test' },
              },
              target: { id: 'tg-1', name: 'edge', type: 'Envoy', config: {} },
              certificate: null,
            },
          ],
          awaiting_csr: [],
        }),
      },
    ];
    await agent().tick();
    const report = seen.find((s) => s.path.endsWith('/jobs/jb-1/status'));
    expect(report?.body).toEqual({
      status: 'Failed',
      error: 'this agent has no connector for target type Envoy',
    });
  });

  it('sends its key as a bearer token over HTTPS only', async () => {
    expect(
      () =>
        new CertwrightAgent({
          connection: { serverUrl: 'http://127.0.0.1:1', agentId: 'a', apiKey: 'k' },
          connectors: [],
        }),
    ).toThrow('docs/clients/https-upgrade.md');
  });
});
