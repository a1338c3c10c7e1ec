import type { ProtocolMount } from '../shared/mount.js';
import { ACME_BASE_PATH, type AcmeHandlerOptions, createAcmeHandler } from './wire/handler.js';

/** `/acme` (RFC 8555): clients authenticate with JWS-signed requests and nonces, not API keys. */
export function acmeMount(options: AcmeHandlerOptions): ProtocolMount {
  const handler = createAcmeHandler(options);
  return {
    prefix: ACME_BASE_PATH,
    route: `${ACME_BASE_PATH}/{path}`,
    answer: handler.answer,
    bodyLimit: handler.bodyLimit,
    public: {
      why: 'ACME clients authenticate with JWS signed by their account key, with nonces',
      rateLimit: 'enrollment',
    },
    rateLimited: (retryAfterSeconds, request) => handler.rateLimited(request, retryAfterSeconds),
  };
}
