/**
 * A real certwright-server process over TLS 1.3 on 127.0.0.1 (its own PGlite data directory),
 * with a throwaway CA, for the client, CLI and MCP tests.
 */

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeTestPki } from '../../../server/test/support/openssl-pki.js';
import { type ServerProcess, startServerProcess } from '../../../server/test/support/server-process.js';

export const API_KEY = 'clients-test-secret-0123456789abcdef';

export interface TestServer {
  url: string;
  caPath: string;
  /** A CA that did not issue the server's certificate, to prove verification is on. */
  otherCaPath: string;
  process: ServerProcess;
  stop(): void;
}

export async function startTestServer(): Promise<TestServer> {
  const pki = makeTestPki(['server']);
  const other = makeTestPki([]);
  const process = await startServerProcess({
    SVC_TLS_CERT_PATH: pki.issued.server!.cert,
    SVC_TLS_KEY_PATH: pki.issued.server!.key,
    SVC_AUTH_SECRET: API_KEY,
  });
  return {
    url: `https://127.0.0.1:${process.port}`,
    caPath: pki.ca,
    otherCaPath: other.ca,
    process,
    stop: () => process.child.kill('SIGKILL'),
  };
}

export interface StubRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTPS server on 127.0.0.1 answering from a script, recording every request it receives. */
export async function startStubServer(
  /** null: never answer (the connection stays open until the stub closes). */
  answer: (
    request: StubRequest,
    index: number,
  ) => { status: number; headers?: Record<string, string>; body?: string } | null,
): Promise<{ url: string; caPath: string; requests: StubRequest[]; close(): Promise<void> }> {
  const pki = makeTestPki(['stub']);
  const requests: StubRequest[] = [];
  const server: Server = createServer(
    {
      cert: readFileSync(pki.issued.stub!.cert),
      key: readFileSync(pki.issued.stub!.key),
      minVersion: 'TLSv1.3',
    },
    (req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        requests.push(request);
        const reply = answer(request, requests.length - 1);
        if (reply === null) return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? '');
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caPath: pki.ca,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
