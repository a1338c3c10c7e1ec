import { randomBytes } from 'node:crypto';
import { type CertwrightHandler, createHandler, type ResponseEvent } from '@certwright/api';
import {
  createServices,
  SecretBox,
  type Services,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '@certwright/core';
import { buildCertId, der, OID, readCertificate } from '@certwright/core/pki';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountingListener,
  comparable,
  listenCountingWebCalls,
  maxAge,
  openRaw,
  type Reply,
  requestBytes,
  sendRaw,
} from './support/direct-listener.js';
import { ocspCertStatus } from './support/scale.js';

/**
 * The listener answers OCSP requests through the handler's direct entry (no Web Request or
 * Response). What relying parties and operators see must not change: the same status, headers,
 * request id, rate limit answer and metrics event as the Web path gives, and revocations show
 * at once.
 */

const PKI_LIMIT = 8;
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let handler: CertwrightHandler;
let listener: CountingListener;
let issuerId: string;
let certificateId: string;
let certId: Uint8Array;
const events: ResponseEvent[] = [];
/** A new client address per test, so that each starts with a full rate limit. */
let client = 0;

function send(
  method: string,
  path: string,
  options: { body?: Uint8Array; headers?: Record<string, string>; chunked?: boolean } = {},
): Promise<Reply> {
  return sendRaw(listener.port, method, path, {
    ...options,
    headers: { 'x-forwarded-for': `192.0.2.${client}`, ...options.headers },
  });
}

/** The same request through the Web handler, for comparison. */
async function viaWeb(method: string, path: string, body?: Uint8Array, headers: Record<string, string> = {}) {
  const response = await handler(
    new Request(`https://localhost${path}`, {
      method,
      headers,
      ...(body ? { body: new Uint8Array(body) } : {}),
    }),
    { remoteAddress: `192.0.2.${client}` },
  );
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

const ocspRequest = (nonce?: Uint8Array) =>
  der.sequence(
    der.sequence(
      der.sequence(der.sequence(certId)),
      ...(nonce
        ? [der.explicit(2, der.sequence(der.extension(OID.idPkixOcspNonce, false, der.octetString(nonce))))]
        : []),
    ),
  );

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'owner' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'team' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'direct CA', type: 'Local' });
  issuerId = issuer.id;
  const cert = await services.certificates.create(SYSTEM_ACTOR, {
    name: 'direct',
    common_name: 'direct.example.test',
    renewal_policy_id: 'rp-default',
    issuer_id: issuer.id,
    owner_id: owner.id,
    team_id: team.id,
  });
  certificateId = cert.id;
  const issued = await services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id, {});
  const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
  certId = buildCertId(readCertificate(issuingPem!), issued.version!.serial_number, 'sha1').der;
  handler = createHandler({
    auth: { type: 'none' },
    services,
    rateLimits: { pki: PKI_LIMIT },
    clientAddress: (req) => req.headers.get('x-forwarded-for') ?? 'unknown',
    onResponse: (event) => events.push(event),
  });
  listener = await listenCountingWebCalls(handler);
}, 180_000);

afterAll(async () => {
  await listener?.close();
  await storage?.close();
});

describe("the server's listener answering OCSP directly", () => {
  it('answers POST and GET like the Web handler: status, headers, a signed good answer', async () => {
    client++;
    listener.webCalls = 0;
    const body = ocspRequest();
    const post = await send('POST', `/.well-known/pki/ocsp/${issuerId}`, {
      body,
      headers: { 'content-type': 'application/ocsp-request' },
    });
    const postWeb = await viaWeb('POST', `/.well-known/pki/ocsp/${issuerId}`, body, {
      'content-type': 'application/ocsp-request',
    });
    expect(post.status).toBe(200);
    expect(comparable(post.headers)).toEqual(comparable(postWeb.headers));
    expect(post.headers['cache-control']).toBe('no-store');
    expect(ocspCertStatus(post.body)).toBe('good');
    // A request without nonce is served from the cache: the very bytes the Web entry gives.
    expect(post.body.equals(postWeb.body)).toBe(true);

    const path = `/.well-known/pki/ocsp/${issuerId}/${encodeURIComponent(Buffer.from(body).toString('base64'))}`;
    const get = await send('GET', path);
    const getWeb = await viaWeb('GET', path);
    expect(get.status).toBe(200);
    expect(get.headers['cache-control']).toMatch(/^max-age=\d+, public, no-transform, must-revalidate$/);
    expect(comparable(get.headers)).toEqual(comparable(getWeb.headers));
    // The same nextUpdate: the Web answer came at most a second later.
    expect(maxAge(get.headers) - maxAge(getWeb.headers)).toBeGreaterThanOrEqual(0);
    expect(maxAge(get.headers) - maxAge(getWeb.headers)).toBeLessThanOrEqual(1);
    expect(get.body.equals(getWeb.body)).toBe(true);
    // Both listener requests went the direct way (the comparisons call the handler itself).
    expect(listener.webCalls).toBe(0);
  });

  it('echoes a valid X-Request-Id and reports the answer to onResponse like the Web path', async () => {
    client++;
    events.length = 0;
    const reply = await send('POST', `/.well-known/pki/ocsp/${issuerId}`, {
      body: ocspRequest(randomBytes(16)),
      headers: { 'content-type': 'application/ocsp-request', 'x-request-id': 'relying-party-42' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-request-id']).toBe('relying-party-42');
    expect(events).toEqual([
      expect.objectContaining({
        method: 'POST',
        route: '/.well-known/pki/ocsp/{issuer_id}',
        operationId: 'postOcspRequest',
        status: 200,
        requestId: 'relying-party-42',
      }),
    ]);
  });

  it('spends the pki rate limit and answers HTTP 429 with a tryLater body and Retry-After past it', async () => {
    client++;
    events.length = 0;
    const body = ocspRequest();
    const replies: Reply[] = [];
    for (let i = 0; i <= PKI_LIMIT; i++) {
      replies.push(
        await send('POST', `/.well-known/pki/ocsp/${issuerId}`, {
          body,
          headers: { 'content-type': 'application/ocsp-request' },
        }),
      );
    }
    const last = replies.at(-1)!;
    expect(replies.slice(0, PKI_LIMIT).every((r) => r.body.length > 5)).toBe(true);
    expect(last.status).toBe(429);
    // OCSPResponse { responseStatus tryLater (3) }, unsigned.
    expect(last.body.toString('hex')).toBe('30030a0103');
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
    expect(last.headers['x-request-id']).toBeTruthy();
    expect(events.at(-1)).toMatchObject({ rateLimited: true, status: 429 });
  });

  it('leaves what it does not answer to the Web path: wrong type, HEAD, the serial route, a chunked body', async () => {
    client++;
    listener.webCalls = 0;
    const base = `/.well-known/pki/ocsp/${issuerId}`;
    const wrongType = await send('POST', base, {
      body: ocspRequest(),
      headers: { 'content-type': 'text/plain' },
    });
    expect(wrongType.status).toBe(415);
    const serial = await send('GET', `${base}/serial/01`);
    expect(serial.status).toBe(200);
    expect(JSON.parse(serial.body.toString()).status).toBe('unknown');
    const head = await send(
      'HEAD',
      `${base}/${encodeURIComponent(Buffer.from(ocspRequest()).toString('base64'))}`,
    );
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const chunked = await send('POST', base, {
      body: ocspRequest(),
      chunked: true,
      headers: { 'content-type': 'application/ocsp-request', 'transfer-encoding': 'chunked' },
    });
    expect(chunked.status).toBe(200);
    expect(ocspCertStatus(chunked.body)).toBe('good');
    const garbage = await send('POST', base, {
      body: Buffer.from('not der'),
      headers: { 'content-type': 'application/ocsp-request' },
    });
    expect(garbage.status).toBe(400);
    // All but the unparsable body (a direct request, answered malformedRequest there) took the Web path.
    expect(listener.webCalls).toBe(4);
  });

  it('says revoked, cached and freshly signed alike, as soon as the revocation returned', async () => {
    client++;
    const base = `/.well-known/pki/ocsp/${issuerId}`;
    const type = { 'content-type': 'application/ocsp-request' };
    expect(ocspCertStatus((await send('POST', base, { body: ocspRequest(), headers: type })).body)).toBe(
      'good',
    );
    expect(
      ocspCertStatus((await send('POST', base, { body: ocspRequest(randomBytes(16)), headers: type })).body),
    ).toBe('good');
    await services.certificates.revoke(SYSTEM_ACTOR, certificateId, 'keyCompromise');
    expect(ocspCertStatus((await send('POST', base, { body: ocspRequest(), headers: type })).body)).toBe(
      'revoked',
    );
    expect(
      ocspCertStatus((await send('POST', base, { body: ocspRequest(randomBytes(16)), headers: type })).body),
    ).toBe('revoked');
  });
});

describe('the direct connections: keep-alive, pipelining, limits and the handover to node:http', () => {
  // Each test its own client address, so that the pki rate limit never answers for it.
  const type = () => ({
    'content-type': 'application/ocsp-request',
    'x-forwarded-for': `198.51.100.${client}`,
  });
  const post = () => requestBytes('POST', `/.well-known/pki/ocsp/${issuerId}`, ocspRequest(), type());
  const webGet = (path: string) => requestBytes('GET', path, undefined, type());
  const isOcspAnswer = (reply: Reply) =>
    reply.status === 200 &&
    reply.headers['content-type'] === 'application/ocsp-response' &&
    reply.body[0] === 0x30;

  it('answers OCSP on a kept-alive connection, then hands it to node:http for another request, which still works', async () => {
    client++;
    listener.webCalls = 0;
    const connection = await openRaw(listener.port);
    try {
      for (let i = 0; i < 3; i++) {
        connection.write(post());
        const reply = await connection.reply();
        expect(isOcspAnswer(reply)).toBe(true);
        expect(reply.headers.connection).toBe('keep-alive');
        expect(reply.headers['keep-alive']).toMatch(/^timeout=\d+$/);
      }
      expect(listener.webCalls).toBe(0);
      connection.write(webGet(`/.well-known/pki/ocsp/${issuerId}/serial/01`));
      const serial = await connection.reply();
      expect(serial.status).toBe(200);
      expect(JSON.parse(serial.body.toString()).serial).toBe('1');
      // node:http has the connection now, and still answers OCSP on it.
      connection.write(post());
      expect(isOcspAnswer(await connection.reply())).toBe(true);
      expect(listener.webCalls).toBe(1);
    } finally {
      connection.destroy();
    }
  });

  it('answers pipelined requests in order, a request for the Web path among them included', async () => {
    client++;
    listener.webCalls = 0;
    const connection = await openRaw(listener.port);
    try {
      connection.write(
        Buffer.concat([post(), post(), webGet(`/.well-known/pki/ocsp/${issuerId}/serial/02`), post()]),
      );
      expect(isOcspAnswer(await connection.reply())).toBe(true);
      expect(isOcspAnswer(await connection.reply())).toBe(true);
      expect(JSON.parse((await connection.reply()).body.toString()).serial).toBe('2');
      expect(isOcspAnswer(await connection.reply())).toBe(true);
      expect(listener.webCalls).toBe(1);
    } finally {
      connection.destroy();
    }
  });

  it('reads each head anew when it differs from the one before, though a repeated head is not parsed again', async () => {
    client++;
    const connection = await openRaw(listener.port);
    const withId = (id: string) =>
      requestBytes('POST', `/.well-known/pki/ocsp/${issuerId}`, ocspRequest(), {
        ...type(),
        'x-request-id': id,
      });
    try {
      for (const id of ['repeat-a', 'repeat-a', 'repeat-b', 'repeat-b', 'repeat-a']) {
        connection.write(withId(id));
        const reply = await connection.reply();
        expect(isOcspAnswer(reply)).toBe(true);
        expect(reply.headers['x-request-id']).toBe(id);
      }
      // The same head in every byte but the content type: the Web path's 415, not the direct answer.
      connection.write(
        requestBytes('POST', `/.well-known/pki/ocsp/${issuerId}`, ocspRequest(), {
          ...type(),
          'content-type': 'application/ocsp-requesx',
          'x-request-id': 'repeat-a',
        }),
      );
      expect((await connection.reply()).status).toBe(415);
    } finally {
      connection.destroy();
    }
  });

  it('answers a request whose head and body arrive in pieces', async () => {
    client++;
    const connection = await openRaw(listener.port);
    try {
      const bytes = post();
      for (const [from, to] of [
        [0, 7],
        [7, 40],
        [40, bytes.length - 3],
        [bytes.length - 3, bytes.length],
      ] as const) {
        connection.write(bytes.subarray(from, to));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(isOcspAnswer(await connection.reply())).toBe(true);
    } finally {
      connection.destroy();
    }
  });

  it('refuses a head over the size limit with 431 and closes the connection', async () => {
    client++;
    const connection = await openRaw(listener.port);
    connection.write(
      `POST /.well-known/pki/ocsp/${issuerId} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(20_000)}`,
    );
    const reply = await connection.reply();
    expect(reply.status).toBe(431);
    expect(reply.headers.connection).toBe('close');
    await connection.closed;
  });

  it('closes after the answer when the client says Connection: close', async () => {
    client++;
    const connection = await openRaw(listener.port);
    connection.write(
      requestBytes('POST', `/.well-known/pki/ocsp/${issuerId}`, ocspRequest(), {
        ...type(),
        connection: 'close',
      }),
    );
    const reply = await connection.reply();
    expect(isOcspAnswer(reply)).toBe(true);
    expect(reply.headers.connection).toBe('close');
    await connection.closed;
  });

  it('lets a closing server end its idle kept-alive connections, and a busy one after its answer', async () => {
    client++;
    const idle = await openRaw(listener.port);
    idle.write(post());
    expect(isOcspAnswer(await idle.reply())).toBe(true);
    const busy = await openRaw(listener.port);
    const bytes = post();
    // Half a request: the connection is in the middle of one when the server starts closing.
    busy.write(bytes.subarray(0, 30));
    await new Promise((resolve) => setTimeout(resolve, 20));
    listener.connections.closeIdle();
    await idle.closed;
    busy.write(bytes.subarray(30));
    const reply = await busy.reply();
    expect(isOcspAnswer(reply)).toBe(true);
    expect(reply.headers.connection).toBe('close');
    await busy.closed;
  });
});
