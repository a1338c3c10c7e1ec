import { CertwrightError } from '../errors.js';

/**
 * Reads a request body as bytes without ever holding more than `limit` bytes: a declared
 * Content-Length above the limit is refused before reading, and a streamed body is cut off
 * as soon as it passes the limit.
 */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function tooLarge(limit: number): CertwrightError {
  return new CertwrightError('payload_too_large', `request body exceeds the limit of ${limit} bytes`);
}
