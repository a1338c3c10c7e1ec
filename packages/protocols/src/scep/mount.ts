import type { Logger } from '@certwright/core';
import type { OpenApiOperation, ProtocolMount } from '../shared/mount.js';
import type { ScepAuthority } from './wire/authority.js';
import {
  createScepHandler,
  parseScepPath,
  SCEP_BASE_PATH,
  SCEP_MTLS_BASE_PATH,
  SCEP_OPERATIONS,
} from './wire/handler.js';

/**
 * SCEP (RFC 8894) under /scep and its mutual-TLS sibling /scep-mtls. Public: SCEP clients
 * authenticate in the protocol (challenge password, device-management challenge, the
 * certificate being renewed, TLS client certificates), never with an API key; both spend the
 * `enrollment` limit.
 */

export interface ScepMountOptions {
  /** Profiles, the RA, PKIOperation and audit (the SCEP service, scep/server). */
  authority: ScepAuthority;
  logger: Logger;
}

const ACCESS = {
  why: 'SCEP clients authenticate in the protocol (challenge password, signing certificate, TLS client certificates)',
  rateLimit: 'enrollment',
} as const;
const TAG = 'SCEP';

const text = (description: string) => ({ description, content: { 'text/plain': {} } });
const pathIdParam = {
  name: 'path_id',
  in: 'path',
  required: true,
  description: "the profile's `scep.path_id` (or its id when it has none)",
  schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' },
};
const operationParam = {
  name: 'operation',
  in: 'query',
  required: true,
  description: 'GetCACaps, GetCACert or PKIOperation (RFC 8894 §4)',
  schema: { type: 'string', enum: [...SCEP_OPERATIONS] },
};
const messageParam = {
  name: 'message',
  in: 'query',
  required: false,
  description: 'GET PKIOperation: the PKIMessage, base64 (RFC 8894 §4.3)',
  schema: { type: 'string' },
};
const errors = {
  400: text('unknown operation, or a body that is no PKIMessage (no CertRep can be formed)'),
  403: text('mutual-TLS route: no client certificate, or one the profile does not trust'),
  404: text('no such SCEP profile, or SCEP disabled on it'),
  413: text('the PKIMessage is larger than 256 KiB'),
  500: text('internal error'),
  503: text('storage or the issuer is unavailable'),
};

function operations(id: string, withPath: boolean): Record<'get' | 'post', OpenApiOperation> {
  const parameters = withPath ? [pathIdParam, operationParam] : [operationParam];
  return {
    get: {
      operationId: `${id}Get`,
      summary:
        'GetCACaps (text), GetCACert (CA + RA as certs-only CMS) or PKIOperation with a base64 message',
      tags: [TAG],
      parameters: [...parameters, messageParam],
      responses: {
        200: {
          description:
            'GetCACaps: capabilities, one per line; GetCACert: application/x-x509-ca-ra-cert; PKIOperation: a CertRep',
          content: {
            'text/plain': {},
            'application/x-x509-ca-ra-cert': {},
            'application/x-x509-ca-cert': {},
            'application/x-pki-message': {},
          },
        },
        ...errors,
      },
    },
    post: {
      operationId: `${id}Post`,
      summary:
        'PKIOperation (RFC 8894 §4.3): PKCSReq, RenewalReq or CertPoll in, a CertRep (SUCCESS or FAILURE with failInfo) out',
      tags: [TAG],
      parameters,
      requestBody: {
        required: true,
        description: 'the PKIMessage, DER',
        content: { 'application/x-pki-message': {} },
      },
      responses: {
        200: { description: 'the CertRep, DER', content: { 'application/x-pki-message': {} } },
        ...errors,
      },
    },
  };
}

function scepMount(context: ScepMountOptions, mtls: boolean): ProtocolMount {
  const prefix = mtls ? SCEP_MTLS_BASE_PATH : SCEP_BASE_PATH;
  const family = mtls ? 'scepMtls' : 'scep';
  const handler = createScepHandler({
    authority: context.authority,
    mtls,
    onError: (error) => context.logger.error({ err: error }, 'SCEP request failed'),
    onRefused: (result) =>
      result.outcome.status === 'FAILURE' &&
      context.logger.info(
        {
          transaction_id: result.transactionId,
          reason: result.outcome.reason,
          detail: result.outcome.message,
        },
        'SCEP request refused',
      ),
  });
  return {
    prefix,
    route: `${prefix}/{path_id}`,
    // GetCACaps, GetCACert and PKIOperation (its bodyLimit) skip the Web Request/Response on the server's own listener.
    answer: handler.answer,
    bodyLimit: handler.bodyLimit,
    public: ACCESS,
    operations: {
      [prefix]: operations(family, false),
      [`${prefix}/{path_id}`]: operations(`${family}ForProfile`, true),
    },
    operationOf: (request) => {
      const rest = new URL(request.url).pathname.slice(prefix.length).replace(/^\/+/, '');
      const target = parseScepPath(rest === '' ? [] : rest.split('/'));
      if (!target) return undefined;
      const method =
        request.method === 'POST'
          ? 'Post'
          : request.method === 'GET' || request.method === 'HEAD'
            ? 'Get'
            : null;
      if (!method) return undefined;
      return `${family}${target.pathId === null ? '' : 'ForProfile'}${method}`;
    },
  };
}

export const scepMounts = (context: ScepMountOptions): ProtocolMount[] => [
  scepMount(context, false),
  scepMount(context, true),
];
