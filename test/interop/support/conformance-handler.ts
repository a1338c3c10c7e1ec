/**
 * The handler every host runs in the conformance table. It is written against the Handler
 * type only, reports what it received in headers and bodies the test can compare byte for
 * byte, and dispatches on the last path segment so it can be mounted under any prefix.
 */
import { createHash } from 'node:crypto';
import type { Handler } from '@certwright/core';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** 256 bytes 0x00..0xff: every byte value, so any text decoding on the way shows. */
export const BINARY_RESPONSE = Uint8Array.from({ length: 256 }, (_, i) => i);

export const STREAM_CHUNKS = ['first chunk\n', 'second chunk\n', 'third chunk\n'];

export const conformanceHandler: Handler = async (request, transport) => {
  const url = new URL(request.url);
  const route = url.pathname.split('/').pop();
  switch (route) {
    case 'echo': {
      const body = new Uint8Array(await request.arrayBuffer());
      const headers = new Headers({
        'content-type': 'application/octet-stream',
        'x-echo-method': request.method,
        'x-echo-path': url.pathname + url.search,
        'x-echo-origin': url.origin,
        'x-echo-query-a': url.searchParams.getAll('a').join(','),
        'x-echo-content-type': request.headers.get('content-type') ?? '(none)',
        'x-echo-custom': request.headers.get('x-custom') ?? '(none)',
        'x-echo-body-sha256': sha256(body),
      });
      return new Response(body, { status: 200, headers });
    }
    case 'tls': {
      const tls = transport.tls;
      const leaf = tls?.clientCertificateChain[0];
      return Response.json({
        remote_address: transport.remoteAddress,
        protocol: tls?.protocol ?? null,
        chain_length: tls?.clientCertificateChain.length ?? 0,
        leaf_sha256: leaf ? sha256(leaf) : null,
        exporter_length: tls?.exportKeyingMaterial(32, 'EXPORTER-certwright-conformance').byteLength ?? 0,
      });
    }
    case 'stream': {
      const encoder = new TextEncoder();
      let next = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          // Yield between chunks so each one leaves as its own write.
          await new Promise((resolve) => setImmediate(resolve));
          const chunk = STREAM_CHUNKS[next++];
          if (chunk === undefined) controller.close();
          else controller.enqueue(encoder.encode(chunk));
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/plain; charset=utf-8' } });
    }
    case 'broken-stream': {
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setImmediate(resolve));
          if (sent) controller.error(new Error('storage went away half-way'));
          else controller.enqueue(new TextEncoder().encode('partial'));
          sent = true;
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/plain' } });
    }
    case 'cookies': {
      const headers = new Headers({ 'content-type': 'text/plain', 'x-certwright-test': 'one' });
      headers.append('set-cookie', 'a=1; Path=/; HttpOnly; Secure');
      headers.append('set-cookie', 'b=2; Path=/; Expires=Wed, 21 Oct 2099 07:28:00 GMT');
      headers.append('x-multi', 'first');
      headers.append('x-multi', 'second');
      return new Response('cookies set', { headers });
    }
    case 'binary':
      return new Response(BINARY_RESPONSE, {
        headers: {
          'content-type': 'application/pkix-cert',
          'content-length': String(BINARY_RESPONSE.byteLength),
          'cache-control': 'max-age=60',
        },
      });
    case 'empty':
      return new Response(null, { status: 204, headers: { 'x-certwright-test': 'empty' } });
    default:
      return Response.json(
        { type: 'about:blank', title: 'Not Found', status: 404 },
        { status: 404, headers: { 'content-type': 'application/problem+json' } },
      );
  }
};
