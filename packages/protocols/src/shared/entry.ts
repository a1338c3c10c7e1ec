import {
  type Handler,
  type PlainResponse,
  type RequestHead,
  readBodyBytes,
  type TransportContext,
  withFixedLength,
} from '@certwright/core';

/**
 * The request's body, read whole on the first call: at most `maxBytes`, else the CertwrightError
 * `payload_too_large`. The protocol names the limit where it knows what it reads.
 */
export type BodyReader = (maxBytes: number) => Promise<Uint8Array>;

/**
 * What every wire protocol implements once (docs/architecture.md, "The request pipeline"). The
 * Web handler and the direct entry are both derived from it, so the two cannot answer apart:
 * - `answer`: the answer to one request, from what a host knows before the body (method, URL,
 *   headers), a reader of the body, and the connection. Protocol failures are answered in the
 *   protocol's own format; what it throws is answered by the caller's error mapping.
 * - `bodyLimit`: the requests a host may read whole itself (at most that many bytes) and answer
 *   without a Web Request or Response; undefined for the rest, and absent for a protocol that
 *   takes none that way. It is asked with method and path alone (may the body be read?), then
 *   with the headers too before the answer: a protocol that takes only requests with certain
 *   headers (its content type) declines the others there, and the Web path answers them.
 */
export interface ProtocolEntry {
  answer(
    head: RequestHead,
    readBody: BodyReader,
    transport: TransportContext,
  ): Promise<PlainResponse | Response>;
  bodyLimit?(method: string, pathname: string, headers?: RequestHead['headers']): number | undefined;
}

/** A written answer as a Web Response, the body copied out of whatever pool it was cut from. */
export function toWebResponse(answer: PlainResponse | Response): Response {
  if (answer instanceof Response) return answer;
  // 204 and 304 carry no content (RFC 9110 §15.3.5, §15.4.5): a Response refuses a body for them.
  if (answer.status === 204 || answer.status === 304 || answer.body.byteLength === 0) {
    return new Response(null, { status: answer.status, headers: answer.headers });
  }
  const copy = new Uint8Array(answer.body.byteLength);
  copy.set(answer.body);
  return new Response(copy, { status: answer.status, headers: answer.headers });
}

/**
 * The Web-standard handler of a protocol: the body from the Request's stream, the answer with
 * its Content-Length (HEAD keeps the length and drops the body).
 */
export function webHandlerOf(entry: ProtocolEntry): Handler {
  return async (request, transport) => {
    const answer = await entry.answer(request, (maxBytes) => readBodyBytes(request, maxBytes), transport);
    return withFixedLength(toWebResponse(answer), request.method);
  };
}

/** The protocol's entry with its Web handler: `create<X>Handler`'s result, for any Web host. */
export function withWebHandler<E extends ProtocolEntry>(entry: E): Handler & E {
  return Object.assign(webHandlerOf(entry), entry);
}
