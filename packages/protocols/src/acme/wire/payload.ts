import { acmeProblem } from './problem.js';

/** Small checks of a JWS payload shared by the order-side endpoints. */

/** RFC 8555 §6.3: a POST-as-GET carries the empty payload, nothing else. */
export function requirePostAsGet(postAsGet: boolean): void {
  if (!postAsGet)
    throw acmeProblem('malformed', 'this resource is fetched with POST-as-GET (an empty payload)');
}

/** A request that must carry a JSON object. */
export function requirePayload(payload: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!payload) throw acmeProblem('malformed', 'this request needs a JSON object as its payload');
  return payload;
}

/** A string member of the payload. */
export function stringMember(payload: Record<string, unknown>, name: string): string {
  const value = payload[name];
  if (typeof value !== 'string')
    throw acmeProblem('malformed', `the payload member '${name}' must be a string`);
  return value;
}
