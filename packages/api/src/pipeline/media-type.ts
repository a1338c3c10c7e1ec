import type { RequestHead } from '@certwright/core';
import { problem } from '../http/problem.js';
import type { RouteSpec } from '../http/route.js';
import { isJsonMediaType } from '../http/validate.js';
import { STATE_CHANGING } from './csrf.js';

/**
 * State-changing JSON routes take only `application/json` (docs/architecture.md, "Secure by
 * default"): a cross-site form post cannot reach them. A route that reads its own body types
 * (`readsBody`) takes those too. Without a Content-Type the body is judged when it is read
 * ({@link typelessBodyRefusal}).
 */
export function mediaTypeRefusal(
  spec: RouteSpec,
  head: RequestHead,
  requestId: string,
): Response | undefined {
  const contentType = head.headers.get('content-type');
  if (!STATE_CHANGING.has(spec.method) || contentType === null) return undefined;
  const ownMediaType =
    spec.readsBody === 'any' ||
    (spec.readsBody !== undefined &&
      spec.readsBody.includes(contentType.split(';')[0]!.trim().toLowerCase()));
  return ownMediaType || isJsonMediaType(contentType) ? undefined : unsupportedMediaType(requestId);
}

/** A body without a type could be anything, e.g. a cross-site fetch of a typeless Blob. */
export function typelessBodyRefusal(
  bytes: Uint8Array,
  head: RequestHead,
  requestId: string,
): Response | undefined {
  return bytes.byteLength > 0 && head.headers.get('content-type') === null
    ? unsupportedMediaType(requestId)
    : undefined;
}

function unsupportedMediaType(requestId: string): Response {
  return problem({
    status: 415,
    code: 'unsupported_media_type',
    detail: 'the body must be application/json',
    requestId,
  });
}
