import type { Principal } from '../auth/principal.js';

/** What the steps learn about a request on the way, for its answer's headers and its report. */
export interface Outcome {
  /** Route template (`/api/v1/agents/{id}`), or `unmatched`; never the raw path. */
  route: string;
  operationId?: string;
  rateLimited?: true;
  /** A protocol mount answered: its answer goes out with a Content-Length, never chunked. */
  protocol?: true;
  principal?: Principal;
}
