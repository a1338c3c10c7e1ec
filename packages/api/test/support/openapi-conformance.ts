import { randomUUID } from 'node:crypto';
import type { TransportContext } from '@certwright/core';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { CertwrightHandler, ResponseEvent } from '../../src/index.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

const PROBLEM = 'application/problem+json';

interface Operation {
  path: string;
  method: string;
  protocol: boolean;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/**
 * Checks every answer a test observes against the handler's own OpenAPI document: the status
 * must be declared for the operation, the Content-Type must be one the status declares, a JSON
 * body must validate against the declared schema, and every REST error must be problem JSON.
 * A contradiction throws from the call, so the test that saw it fails and names it.
 *
 * The check runs inline in each test worker, on the handler that answered: nothing has to be
 * collected across vitest's workers.
 */
export class OpenApiConformance {
  readonly #events = new Map<string, ResponseEvent>();
  readonly #operations = new WeakMap<CertwrightHandler, Map<string, Operation>>();
  readonly #validators = new WeakMap<object, ValidateFunction>();
  readonly #ajv: Ajv2020;

  constructor() {
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.#ajv);
  }

  /** Pass as `onResponse` to createHandler: it tells which operation answered each request. */
  readonly onResponse = (event: ResponseEvent): void => {
    this.#events.set(event.requestId, event);
  };

  /** createHandler options that report to this checker, keeping a caller's own `onResponse`. */
  options(onResponse?: (event: ResponseEvent) => void): { onResponse: (event: ResponseEvent) => void } {
    return {
      onResponse: (event) => {
        this.onResponse(event);
        onResponse?.(event);
      },
    };
  }

  async call(handler: CertwrightHandler, request: Request, transport: TransportContext): Promise<Response> {
    if (!request.headers.has('x-request-id')) request.headers.set('x-request-id', randomUUID());
    const requestId = request.headers.get('x-request-id') as string;
    const response = await handler(request, transport);
    const answeredId = response.headers.get('x-request-id') ?? requestId;
    const event = this.#events.get(answeredId);
    this.#events.delete(answeredId);
    if (!event) throw new Error(`no response event for ${request.method} ${request.url}`);
    await this.#check(handler, request, response, event);
    return response;
  }

  async #check(handler: CertwrightHandler, request: Request, response: Response, event: ResponseEvent) {
    const what = `${request.method} ${new URL(request.url).pathname} → ${response.status}`;
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const operation = event.operationId ? this.#index(handler).get(event.operationId) : undefined;
    if (event.operationId && !operation) {
      throw new Error(`${what}: operation '${event.operationId}' is missing from the OpenAPI document`);
    }
    if (!operation) {
      // Unknown paths and 405s are answered by the REST edge; protocol handlers keep their formats.
      const fromProtocol = handler.protocols.some((m) => m.route === event.route);
      if (response.status >= 400 && !fromProtocol) this.#expectProblem(what, type);
      return;
    }
    const declared = operation.responses[String(response.status)];
    if (!declared) {
      throw new Error(
        `${what}: ${event.operationId} answered ${response.status}, which its OpenAPI operation does not declare ` +
          `(declared: ${Object.keys(operation.responses).join(', ')})`,
      );
    }
    // A REST error is problem JSON unless its operation declares another body for it (only the
    // readiness probe's 503 does; openapi.test.ts keeps it that way).
    const ownBody = Object.keys(declared.content ?? {}).some((t) => t !== PROBLEM);
    if (response.status >= 400 && !operation.protocol && !ownBody) this.#expectProblem(what, type);
    if (request.method === 'HEAD') return;
    const body = await response.clone().text();
    if (!declared.content) {
      if (body !== '')
        throw new Error(`${what}: declared without a body, answered ${type} '${body.slice(0, 80)}'`);
      return;
    }
    const media = declared.content[type];
    if (!media) {
      throw new Error(
        `${what}: answered Content-Type '${type}'; declared: ${Object.keys(declared.content).join(', ')}`,
      );
    }
    if (media.schema && /json$/.test(type)) this.#validate(what, media.schema, JSON.parse(body), handler);
  }

  #expectProblem(what: string, type: string): void {
    if (type !== PROBLEM) throw new Error(`${what}: an error answered '${type}', not ${PROBLEM}`);
  }

  #validate(what: string, schema: unknown, value: unknown, handler: CertwrightHandler): void {
    let validate = this.#validators.get(schema as object);
    if (!validate) {
      // Refs such as #/components/schemas/Problem resolve against the document's components.
      validate = this.#ajv.compile({ ...(schema as object), components: handler.openapi.components });
      this.#validators.set(schema as object, validate);
    }
    if (!validate(value)) {
      const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      throw new Error(
        `${what}: the body does not match the declared schema: ${errors}\n${JSON.stringify(value).slice(0, 500)}`,
      );
    }
  }

  #index(handler: CertwrightHandler): Map<string, Operation> {
    let index = this.#operations.get(handler);
    if (index) return index;
    index = new Map();
    const protocolIds = new Set(
      handler.protocols.flatMap((m) =>
        Object.values(m.operations ?? {}).flatMap((item) => Object.values(item).map((op) => op?.operationId)),
      ),
    );
    for (const [path, item] of Object.entries(handler.openapi.paths)) {
      for (const [method, value] of Object.entries(item)) {
        const op = value as { operationId: string; responses: Operation['responses'] };
        index.set(op.operationId, {
          path,
          method,
          protocol: protocolIds.has(op.operationId),
          responses: op.responses,
        });
      }
    }
    this.#operations.set(handler, index);
    return index;
  }
}

/** One checker per test worker; harnesses share it. */
export const conformance = new OpenApiConformance();
