import { CertwrightError, type DirectPath, type PlainResponse, pathnameOf } from '@certwright/core';
import type { BodyReader, ProtocolMounts } from '@certwright/protocols/mount';
import type { Exchange } from './exchange.js';
import type { ServeProtocol } from './serve-protocol.js';

/**
 * The handler's direct entry (core's `DirectPath`), derived from the mounts: a public mount's
 * `bodyLimit` requests, run through the same exchange and protocol steps as the Web entry —
 * only the body comes read already and the answer stays written (no Web objects).
 */
export function directEntry(mounts: ProtocolMounts, exchange: Exchange, serve: ServeProtocol): DirectPath {
  /** A public mount's requests that it takes read whole; undefined for every other request. */
  const bodyLimit = (method: string, pathname: string): number | undefined => {
    const mount = mounts.match(pathname);
    return mount?.public ? mount.bodyLimit?.(method, pathname) : undefined;
  };
  return {
    bodyLimit,
    async answer(head, body, transport) {
      const pathname = pathnameOf(head);
      const mount = mounts.match(pathname);
      if (!mount?.public || mount.bodyLimit?.(head.method, pathname, head.headers) === undefined) {
        return undefined;
      }
      const readBody = heldBody(body);
      return exchange(
        head,
        transport,
        (requestId, outcome) => serve(mount, head, readBody, transport, requestId, outcome),
        asWritten,
      );
    },
  };
}

const asWritten = (answer: Response | PlainResponse) => answer;

/** The body a host read already, held to a protocol's limit as a Request's stream would be. */
function heldBody(body: Uint8Array): BodyReader {
  return async (maxBytes) => {
    if (body.byteLength > maxBytes) {
      throw new CertwrightError('payload_too_large', `request body exceeds the limit of ${maxBytes} bytes`);
    }
    return body;
  };
}
