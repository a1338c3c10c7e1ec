import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { ClientConfigError } from './errors.js';
import type { ClientOptions } from './options.js';

export const INSECURE_WARNING =
  'TLS certificate verification is OFF (SVC_SERVER_TLS_INSECURE_SKIP_VERIFY): anyone on the path can ' +
  'read the API key and forge answers. Use it for development only; for a private CA set ' +
  'SVC_SERVER_CA_BUNDLE_PATH instead.';

/** The undici dispatcher that carries the TLS choices: a private CA bundle, or no verification. */
export function createDispatcher(options: ClientOptions): Agent {
  let ca = options.ca;
  if (options.caBundlePath !== undefined) {
    try {
      ca = readFileSync(options.caBundlePath, 'utf8');
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'unreadable';
      throw new ClientConfigError(`SVC_SERVER_CA_BUNDLE_PATH: cannot read ${options.caBundlePath} (${code})`);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
      throw new ClientConfigError(
        `SVC_SERVER_CA_BUNDLE_PATH: ${options.caBundlePath} holds no PEM certificate`,
      );
    }
  }
  if (options.insecureSkipVerify) {
    (options.warn ?? ((message) => process.emitWarning(message, { code: 'CERTWRIGHT_TLS_INSECURE' })))(
      INSECURE_WARNING,
    );
  }
  return new Agent({
    connect: {
      ...(ca !== undefined ? { ca } : {}),
      rejectUnauthorized: !options.insecureSkipVerify,
    },
  });
}
