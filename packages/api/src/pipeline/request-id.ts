import { randomUUID } from 'node:crypto';
import type { RequestHead } from '@certwright/core';

/** What a caller's `X-Request-Id` may hold to be echoed: short, printable, no separators a log could split on. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `X-Request-Id` when it is one we can echo safely; a fresh UUID otherwise. */
export function requestIdOf(head: RequestHead): string {
  const incoming = head.headers.get('x-request-id');
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
