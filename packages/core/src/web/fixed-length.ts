/** Statuses that carry no content (RFC 9110 §6.4.1, §15.3.5, §15.4.5): no length is stated. */
const WITHOUT_CONTENT = new Set([204, 304]);

/**
 * The answer with a `Content-Length` and its body in memory, so that every host writes it with a
 * fixed length and never with the chunked transfer coding (RFC 9112 §6.3). Protocol answers need
 * it: widely used EST client libraries read a body only when Content-Length is present, and see
 * an empty one in a chunked answer. Protocol bodies are small and already in memory; reading one
 * again costs a copy. `method` HEAD keeps the length a GET would have and drops the body
 * (RFC 9110 §9.3.2).
 */
export async function withFixedLength(response: Response, method = 'GET'): Promise<Response> {
  const head = method === 'HEAD';
  if (WITHOUT_CONTENT.has(response.status) || response.status < 200) {
    return head && response.body !== null ? withoutBody(response) : response;
  }
  if (response.headers.has('content-length'))
    return head && response.body !== null ? withoutBody(response) : response;
  const bytes = response.body === null ? EMPTY : new Uint8Array(await response.arrayBuffer());
  const headers = new Headers(response.headers);
  headers.set('content-length', String(bytes.byteLength));
  return new Response(head || bytes.byteLength === 0 ? null : bytes, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

const EMPTY = new Uint8Array(0);

function withoutBody(response: Response): Response {
  void response.body?.cancel();
  return new Response(null, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
