import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { createHandler } from '@certwright/api';
import { createServices, SecretBox, SYSTEM_ACTOR, silentLogger, systemClock } from '@certwright/core';
import { buildCertId, der, readCertificate } from '@certwright/core/pki';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HSTS_MAX_AGE_SECONDS, strictTransportSecurity } from '../src/hsts.js';
import { startTlsServer, type TlsServer } from '../src/tls-server.js';
import { makeTestPki } from './support/openssl-pki.js';

/**
 * Every answer of the server's TLS listener carries Strict-Transport-Security (RFC 6797): the
 * REST and console answers node:http writes, the direct path's (OCSP, SCEP, ACME), its 431 for a
 * head too long, and node:http's own 400 for a request it cannot parse.
 */

const pki = makeTestPki(['server']);
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let tls: TlsServer;
let issuerId: string;
let ocsp: Buffer;
const ca = readFileSync(pki.ca, 'utf8');

/** Raw bytes out, the answer's head lines back (the connection closes after one answer). */
function exchange(bytes: Buffer | string): Promise<{ status: number; headers: Map<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: tls.port, servername: 'localhost', ca });
    const chunks: Buffer[] = [];
    socket.on('secureConnect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no answer head: ${JSON.stringify(text)}`));
      const [status, ...lines] = text.slice(0, end).split('\r\n');
      const headers = new Map<string, string>();
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
      }
      resolve({ status: Number(status!.split(' ')[1]), headers });
    });
  });
}

const request = (method: string, path: string, host = '127.0.0.1', body?: Buffer, type?: string) =>
  Buffer.concat([
    Buffer.from(
      `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n` +
        (body ? `Content-Length: ${body.length}\r\n` : '') +
        (type ? `Content-Type: ${type}\r\n` : '') +
        '\r\n',
      'latin1',
    ),
    body ?? Buffer.alloc(0),
  ]);

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'hsts CA', type: 'Local' });
  issuerId = issuer.id;
  const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
  const certId = buildCertId(readCertificate(issuingPem!), '01', 'sha1').der;
  ocsp = Buffer.from(der.sequence(der.sequence(der.sequence(der.sequence(certId)))));
  tls = await startTlsServer({
    handler: createHandler({ auth: { type: 'api-key', secret: 'hsts-secret-0123456789abcdef' }, services }),
    certPath: pki.issued.server!.cert,
    keyPath: pki.issued.server!.key,
    port: 0,
    host: '127.0.0.1',
    logger: silentLogger,
  });
}, 180_000);

afterAll(async () => {
  await tls?.close(0);
  await storage?.close();
});

describe('Strict-Transport-Security on every answer of the TLS listener', () => {
  const pinned = `max-age=${HSTS_MAX_AGE_SECONDS}`;

  it('on REST answers, refusals and unknown paths (node:http writes them)', async () => {
    for (const path of ['/health', '/api/v1/version', '/api/v1/openapi.json', '/nothing']) {
      const answer = await exchange(request('GET', path));
      expect({ path, hsts: answer.headers.get('strict-transport-security') }).toEqual({ path, hsts: pinned });
    }
  });

  it("on the direct path's answers: OCSP, and its 431 for a head over the size limit", async () => {
    const answer = await exchange(
      request('POST', `/.well-known/pki/ocsp/${issuerId}`, '127.0.0.1', ocsp, 'application/ocsp-request'),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/ocsp-response');
    expect(answer.headers.get('strict-transport-security')).toBe(pinned);
    const huge = `GET /.well-known/pki/ocsp/${issuerId} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`;
    const refused = await exchange(huge);
    expect(refused.status).toBe(431);
    expect(refused.headers.get('strict-transport-security')).toBe(pinned);
  });

  it("on node:http's own 400 for a request it cannot parse", async () => {
    const answer = await exchange('NOT AN HTTP REQUEST\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers.get('strict-transport-security')).toBe(pinned);
  });

  it('tells browsers to forget localhost rather than pin it (other local servers stay reachable over HTTP)', async () => {
    const rest = await exchange(request('GET', '/health', `localhost:${tls.port}`));
    expect(rest.headers.get('strict-transport-security')).toBe('max-age=0');
    const direct = await exchange(
      request('POST', `/.well-known/pki/ocsp/${issuerId}`, 'localhost', ocsp, 'application/ocsp-request'),
    );
    expect(direct.headers.get('strict-transport-security')).toBe('max-age=0');
    expect(strictTransportSecurity('ca.localhost:8443')).toBe('max-age=0');
    expect(strictTransportSecurity('pki.example.com:8443')).toBe(pinned);
    expect(strictTransportSecurity('[::1]:8443')).toBe(pinned);
  });
});
