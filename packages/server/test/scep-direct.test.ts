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
import {
  buildScepRequest,
  createCertificationRequest,
  createSelfSignedCertificate,
  generateKeyPair,
  parseCertsOnly,
  readCertificate,
  readCertRep,
} from '@certwright/core/pki';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountingListener,
  comparable,
  listenCountingWebCalls,
  type Reply,
  sendRaw,
} from './support/direct-listener.js';

/**
 * The listener answers SCEP (GetCACaps, GetCACert, PKIOperation) through the handler's direct
 * entry, without a Web Request or Response. What a SCEP client and an operator see must not
 * change: the same status, headers and bytes as the Web path, the same CertRep, the same
 * request id, event and rate limit.
 */

const ENROLLMENT_LIMIT = 8;
const CHALLENGE = 'direct scep challenge';
let storage: Awaited<ReturnType<typeof createPgliteStorage>>;
let services: Services;
let handler: CertwrightHandler;
let listener: CountingListener;
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
    headers: { 'x-forwarded-for': `198.51.100.${client}`, ...options.headers },
  });
}

/** The same request through the Web handler, for comparison. */
async function viaWeb(method: string, path: string, body?: Uint8Array) {
  const response = await handler(
    new Request(`https://localhost${path}`, {
      method,
      // Its own client address: the Web entry's requests do not spend the listener's limit.
      headers: { 'x-forwarded-for': `203.0.113.${client}` },
      ...(body ? { body: new Uint8Array(body) } : {}),
    }),
    { remoteAddress: `203.0.113.${client}` },
  );
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

async function pkcsReq(ra: Uint8Array, cn: string) {
  const key = await generateKeyPair('RSA-2048');
  const now = Date.now();
  const self = createSelfSignedCertificate(
    {
      subject: [{ type: 'CN', value: cn }],
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 86_400_000),
    },
    key.privateKey,
  ).der;
  const csr = createCertificationRequest({
    subject: [{ type: 'CN', value: cn }],
    privateKey: key.privateKey,
    challengePassword: CHALLENGE,
  });
  const der = buildScepRequest({
    messageType: 'PKCSReq',
    transactionId: randomBytes(8).toString('hex'),
    senderNonce: randomBytes(16),
    content: csr,
    signer: { certificate: self, privateKey: key.privateKey },
    recipient: ra,
  });
  return {
    der,
    read: (body: Buffer) =>
      readCertRep(body, { ra, requester: { certificate: self, privateKey: key.privateKey } }),
  };
}

async function raCertificate(): Promise<Uint8Array> {
  const certs = parseCertsOnly((await send('GET', '/scep?operation=GetCACert')).body);
  return certs[certs.length - 1]!;
}

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(randomBytes(32)),
    clock: systemClock,
  });
  services = createServices({ storage, clock: systemClock, logger: silentLogger });
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    scep: { enabled: true, challenge_password: CHALLENGE },
  });
  handler = createHandler({
    auth: { type: 'none' },
    services,
    rateLimits: { enrollment: ENROLLMENT_LIMIT },
    clientAddress: (req) => req.headers.get('x-forwarded-for') ?? 'unknown',
    onResponse: (event) => events.push(event),
  });
  listener = await listenCountingWebCalls(handler);
}, 180_000);

afterAll(async () => {
  await listener?.close();
  await storage?.close();
});

describe("the server's listener answering SCEP directly", () => {
  it('answers GetCACaps, GetCACert and a refused request like the Web handler: status, headers, bytes', async () => {
    client++;
    listener.webCalls = 0;
    for (const [method, path, body] of [
      ['GET', '/scep?operation=GetCACaps'],
      ['GET', '/scep/?operation=GetCACert'],
      ['GET', '/scep?operation=Nothing'],
      ['GET', '/scep/no-such-profile?operation=GetCACaps'],
      ['POST', '/scep?operation=GetCACaps', Buffer.from('x')],
      ['POST', '/scep?operation=PKIOperation', Buffer.from('not a PKIMessage')],
    ] as const) {
      const direct = await send(method, path, body ? { body } : {});
      const web = await viaWeb(method, path, body);
      expect({ path, method, status: direct.status }).toEqual({ path, method, status: web.status });
      expect(comparable(direct.headers)).toEqual(comparable(web.headers));
      expect(direct.body.equals(web.body)).toBe(true);
    }
    // Every listener request went the direct way (the comparisons call the handler itself).
    expect(listener.webCalls).toBe(0);
  });

  it('enrolls with a POSTed PKCSReq: a SUCCESS CertRep with the certificate, request id echoed, event reported', async () => {
    client++;
    listener.webCalls = 0;
    events.length = 0;
    const ra = await raCertificate();
    const request = await pkcsReq(ra, 'direct.scep.example.test');
    const reply = await send('POST', '/scep?operation=PKIOperation', {
      body: request.der,
      headers: { 'content-type': 'application/x-pki-message', 'x-request-id': 'device-7' },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/x-pki-message');
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.headers['x-request-id']).toBe('device-7');
    const rep = request.read(reply.body);
    expect(rep.status).toBe('SUCCESS');
    expect(readCertificate(rep.certificates[0]!).subject.text).toContain('direct.scep.example.test');
    expect(events.at(-1)).toMatchObject({
      method: 'POST',
      route: '/scep/{path_id}',
      operationId: 'scepPost',
      status: 200,
      requestId: 'device-7',
    });
    expect(listener.webCalls).toBe(0);
  });

  it("reads SCEP's requests on the connection itself, query and all: node:http sees none of them", async () => {
    client++;
    listener.webCalls = 0;
    let nodeRequests = 0;
    const counting = () => {
      nodeRequests++;
    };
    listener.server.on('request', counting);
    try {
      const ra = await raCertificate();
      const caps = await send('GET', '/scep?operation=GetCACaps');
      expect(caps.status).toBe(200);
      const request = await pkcsReq(ra, 'connection.scep.example.test');
      const posted = await send('POST', '/scep?operation=PKIOperation', { body: request.der });
      expect(request.read(posted.body).status).toBe('SUCCESS');
      // A GET PKIOperation's base64 message as old clients send it: '+', '/' and '=' unescaped.
      const again = await pkcsReq(ra, 'connection-get.scep.example.test');
      const message = Buffer.from(again.der).toString('base64');
      expect(message).toMatch(/[+/=]/);
      const got = await send('GET', `/scep?operation=PKIOperation&message=${message}`);
      expect(again.read(got.body).status).toBe('SUCCESS');
      expect(nodeRequests).toBe(0);
      // A query the URL parser would rewrite (it percent-encodes an apostrophe) goes to node:http,
      // which answers it the same way.
      const rewritten = await send('GET', "/scep?operation=GetCACaps&x='");
      expect(rewritten.status).toBe(200);
      expect(rewritten.body.equals(caps.body)).toBe(true);
      expect(nodeRequests).toBe(1);
      expect(listener.webCalls).toBe(0);
    } finally {
      listener.server.off('request', counting);
    }
  });

  it('spends the enrollment rate limit like the Web path and answers its over-limit reply past it', async () => {
    client++;
    const replies: Reply[] = [];
    for (let i = 0; i <= ENROLLMENT_LIMIT; i++) replies.push(await send('GET', '/scep?operation=GetCACaps'));
    expect(replies.slice(0, ENROLLMENT_LIMIT).every((r) => r.status === 200)).toBe(true);
    const last = replies.at(-1)!;
    const webReplies = [];
    for (let i = 0; i <= ENROLLMENT_LIMIT; i++)
      webReplies.push(await viaWeb('GET', '/scep?operation=GetCACaps'));
    expect(last.status).toBe(webReplies.at(-1)!.status);
    expect(last.status).toBeGreaterThanOrEqual(429);
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('leaves what it does not answer to the Web path: HEAD, PUT, a chunked body, a GET with a body', async () => {
    client++;
    listener.webCalls = 0;
    const head = await send('HEAD', '/scep?operation=GetCACaps');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const put = await send('PUT', '/scep?operation=GetCACaps');
    expect(put.status).toBe(405);
    const chunked = await send('POST', '/scep?operation=PKIOperation', {
      body: Buffer.from('not a PKIMessage'),
      chunked: true,
      headers: { 'transfer-encoding': 'chunked' },
    });
    expect(chunked.status).toBe(400);
    const getWithBody = await send('GET', '/scep?operation=GetCACaps', { body: Buffer.from('x') });
    expect(getWithBody.status).toBe(200);
    expect(listener.webCalls).toBe(4);
  });
});
