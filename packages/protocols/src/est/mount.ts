import type { Logger } from '@certwright/core';
import type { OpenApiOperation, ProtocolMount } from '../shared/mount.js';
import type { EstAuthority } from './wire/authority.js';
import { createEstHandler, EST_BASE_PATH, EST_MTLS_BASE_PATH, parseEstPath } from './wire/handler.js';

/**
 * EST (RFC 7030) under /.well-known/est and its mutual-TLS sibling /.well-known/est-mtls.
 * Public: EST clients authenticate with HTTP Basic, client certificates and channel binding
 * (checked by the EST service), never with an API key; both spend the `enrollment` limit.
 */

export interface EstMountOptions {
  /** Authentication, CSR checks, issuance and audit (the EST service, est/server). */
  authority: EstAuthority;
  logger: Logger;
}

const ACCESS = {
  why: 'EST clients authenticate in the protocol (HTTP Basic, TLS client certificates, channel binding)',
  rateLimit: 'enrollment',
} as const;
const TAG = 'EST';

const text = (description: string) => ({ description, content: { 'text/plain': {} } });
const base64 = (type: string, description: string) => ({
  description,
  headers: { 'Content-Transfer-Encoding': { description: 'always `base64`', schema: { type: 'string' } } },
  content: { [type]: {} },
});
const retryAfter = {
  'Retry-After': { description: 'seconds until the client may retry', schema: { type: 'integer' } },
};
const pathIdParam = {
  name: 'path_id',
  in: 'path',
  required: true,
  description: "the profile's `est.path_id` (or its id when it has none)",
  schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' },
};

const common = {
  404: text('no such EST profile, EST disabled on it, or (serverkeygen) server key generation disabled'),
  429: { ...text('this client or principal exceeded its rate limit'), headers: retryAfter },
  500: text('internal error'),
  503: { ...text('the issuer is not ready or storage is unavailable'), headers: retryAfter },
};
const enrollFailures = {
  400: text(
    'the CSR is garbage, truncated, wrongly signed, or refused by the profile (the reason is in the body)',
  ),
  401: {
    description: 'HTTP Basic credentials missing or wrong: empty body and `WWW-Authenticate: Basic`',
    headers: { 'WWW-Authenticate': { description: 'Basic realm', schema: { type: 'string' } } },
  },
  403: text('client certificate or channel binding refused'),
  409: text('the certificate to renew cannot be renewed now'),
};
const csrBody = {
  required: true,
  description:
    'a PKCS#10 CSR: base64 DER (RFC 8951), PEM or DER — recognized by content, whatever the Content-Type',
  content: { 'application/pkcs10': {}, 'application/x-pem-file': {}, 'text/plain': {} },
};

type Op = 'cacerts' | 'csrattrs' | 'simpleenroll' | 'simplereenroll' | 'serverkeygen';

function operation(
  op: Op,
  id: string,
  withPath: boolean,
): { method: 'get' | 'post'; operation: OpenApiOperation } {
  const parameters = withPath ? [pathIdParam] : [];
  switch (op) {
    case 'cacerts':
      return {
        method: 'get',
        operation: {
          operationId: id,
          summary: 'CA certificates (RFC 7030 §4.1): certs-only CMS, base64',
          tags: [TAG],
          parameters,
          responses: {
            200: base64('application/pkcs7-mime', 'the CA chain, issuing CA first'),
            ...common,
          },
        },
      };
    case 'csrattrs':
      return {
        method: 'get',
        operation: {
          operationId: id,
          summary: 'CSR attributes (RFC 7030 §4.5): a SEQUENCE of OIDs and attributes, base64',
          tags: [TAG],
          parameters,
          responses: {
            200: base64('application/csrattrs', "the profile's required CSR attributes"),
            204: { description: 'the profile requires no CSR attribute' },
            ...common,
          },
        },
      };
    case 'simpleenroll':
    case 'simplereenroll':
      return {
        method: 'post',
        operation: {
          operationId: id,
          summary:
            op === 'simpleenroll'
              ? 'Enroll (RFC 7030 §4.2.1): the issued certificate as certs-only CMS, base64'
              : 'Re-enroll (RFC 7030 §4.2.2) with the TLS client certificate being renewed',
          tags: [TAG],
          parameters,
          requestBody: csrBody,
          responses: {
            200: base64('application/pkcs7-mime', 'certs-only CMS holding the issued certificate'),
            ...enrollFailures,
            ...common,
          },
        },
      };
    case 'serverkeygen':
      return {
        method: 'post',
        operation: {
          operationId: id,
          summary:
            'Server-side key generation (RFC 7030 §4.4): multipart/mixed with the key (CMS EnvelopedData to the CSR key) and the certificate',
          tags: [TAG],
          parameters,
          requestBody: csrBody,
          responses: {
            200: { description: 'key part, then certificate part', content: { 'multipart/mixed': {} } },
            ...enrollFailures,
            ...common,
          },
        },
      };
  }
}

const OPS: readonly Op[] = ['cacerts', 'csrattrs', 'simpleenroll', 'simplereenroll', 'serverkeygen'];
const ID: Record<Op, string> = {
  cacerts: 'CaCerts',
  csrattrs: 'CsrAttrs',
  simpleenroll: 'SimpleEnroll',
  simplereenroll: 'SimpleReenroll',
  serverkeygen: 'ServerKeygen',
};

function estMount(context: EstMountOptions, mtls: boolean): ProtocolMount {
  const prefix = mtls ? EST_MTLS_BASE_PATH : EST_BASE_PATH;
  const family = mtls ? 'estMtls' : 'est';
  const operations: NonNullable<ProtocolMount['operations']> = {};
  for (const op of OPS) {
    const root = operation(op, `${family}${ID[op]}`, false);
    operations[`${prefix}/${op}`] = { [root.method]: root.operation };
    const profile = operation(op, `${family}${ID[op]}ForProfile`, true);
    operations[`${prefix}/{path_id}/${op}`] = { [profile.method]: profile.operation };
  }
  return {
    prefix,
    route: `${prefix}/{operation}`,
    answer: createEstHandler({
      authority: context.authority,
      mtls,
      onError: (error) => context.logger.error({ err: error }, 'EST request failed'),
    }).answer,
    public: ACCESS,
    operations,
    operationOf: (request) => {
      const rest = new URL(request.url).pathname.slice(prefix.length).replace(/^\/+/, '');
      const target = parseEstPath(rest === '' ? [] : rest.split('/'));
      if (!target) return undefined;
      const expected =
        target.operation === 'cacerts' || target.operation === 'csrattrs' ? ['GET', 'HEAD'] : ['POST'];
      if (!expected.includes(request.method)) return undefined;
      return `${family}${ID[target.operation]}${target.pathId === null ? '' : 'ForProfile'}`;
    },
  };
}

export const estMounts = (context: EstMountOptions): ProtocolMount[] => [
  estMount(context, false),
  estMount(context, true),
];
