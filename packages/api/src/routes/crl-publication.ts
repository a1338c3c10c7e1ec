import type { PublicationOutcome, Services } from '@certwright/core';
import { z } from 'zod';
import { defineRoute, type RouteSpec } from '../http/route.js';
import { idParams, timestamp } from './crud.js';

const outcomeJson = z.object({
  last_published_at: timestamp.nullable(),
  crl_number: z.string().nullable().describe('decimal CRL number of the last published CRL'),
  last_error: z
    .string()
    .nullable()
    .describe('why the last publication failed after its retries (an error code, never a path)'),
  last_error_at: timestamp.nullable(),
});

const publicationJson = z.object({
  issuer_id: z.string(),
  configured: z.boolean().describe('whether this server publishes CRLs (SVC_CRL_PUBLISH_DIR)'),
  target: z.string().nullable().describe('kind of target, e.g. directory'),
  crl: outcomeJson,
  delta: outcomeJson,
});

const view = (o: PublicationOutcome) => ({
  last_published_at: o.last_published_at?.toISOString() ?? null,
  crl_number: o.crl_number,
  last_error: o.last_error,
  last_error_at: o.last_error_at?.toISOString() ?? null,
});

const nothing: PublicationOutcome = {
  last_published_at: null,
  crl_number: null,
  last_error: null,
  last_error_at: null,
};

/** GET /api/v1/issuers/{id}/crl-publication: docs/pki.md, "Publishing CRLs". */
export function crlPublicationRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/issuers/{id}/crl-publication',
      operationId: 'getIssuerCrlPublication',
      permission: 'issuer.read',
      summary:
        "Where the issuer's CRLs are published and how the last publication of the complete and the delta CRL went (this instance)",
      tags: ['issuers'],
      params: idParams,
      responses: {
        200: { description: 'the publication status', schema: publicationJson },
        404: { description: 'unknown issuer' },
      },
      handle: async ({ params }) => {
        await services.issuers.get(params.id);
        const publications = services.pki.revocationStatus.publications;
        const status = publications?.status(params.id);
        return {
          status: 200,
          body: {
            issuer_id: params.id,
            configured: publications !== undefined,
            target: status?.target ?? null,
            crl: view(status?.crl ?? nothing),
            delta: view(status?.delta ?? nothing),
          },
        };
      },
    }),
  ];
}
