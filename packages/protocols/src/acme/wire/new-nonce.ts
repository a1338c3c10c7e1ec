import type { AcmeEndpoint } from './context.js';
import { acmeEmpty } from './responses.js';

/**
 * HEAD /new-nonce → 200, GET /new-nonce → 204 (RFC 8555 §7.2). The nonce itself is the
 * `Replay-Nonce` the handler puts on every answer, so this endpoint only picks the status.
 */
export const newNonce: AcmeEndpoint = async ({ request }) => acmeEmpty(request.method === 'HEAD' ? 200 : 204);
