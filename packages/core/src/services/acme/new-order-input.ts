import { z } from 'zod';
import { acmeIdentifierSchema } from '../../domain/acme.js';
import { parseInput } from '../input.js';
import { MAX_CERT_ID_LENGTH } from './cert-id.js';
import { MAX_ORDER_IDENTIFIERS } from './identifiers.js';

/** RFC 8555 §7.4 newOrder payload (plus `profile` of the directory's profiles, RFC 9773 `replaces`). */
export const acmeNewOrderSchema = z.object({
  identifiers: z.array(acmeIdentifierSchema).min(1).max(MAX_ORDER_IDENTIFIERS),
  notBefore: z.iso.datetime({ offset: true }).optional(),
  notAfter: z.iso.datetime({ offset: true }).optional(),
  profile: z.string().min(1).max(64).optional(),
  replaces: z.string().min(1).max(MAX_CERT_ID_LENGTH).optional(),
});
export type AcmeNewOrderInput = z.input<typeof acmeNewOrderSchema>;
export type AcmeNewOrder = z.output<typeof acmeNewOrderSchema>;

const boundedString = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length >= 1 && value.length <= max;

/**
 * The payload every ACME client sends (identifiers, perhaps `profile` and `replaces`), checked
 * by hand with the schema's own bounds; undefined for anything else (validity dates, other
 * members, a value out of bounds), which the schema then parses and, if need be, names the
 * fields of. zod's generic parse was the largest part of a new order's own CPU and of the code
 * the optimizing compiler had to compile for it.
 */
function plainNewOrder(input: unknown): AcmeNewOrder | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const payload = input as Record<string, unknown>;
  let members = 0;
  for (const name in payload) {
    if (!Object.hasOwn(payload, name)) continue;
    if (name !== 'identifiers' && name !== 'profile' && name !== 'replaces') return undefined;
    members++;
  }
  const { identifiers, profile, replaces } = payload;
  if (
    !Array.isArray(identifiers) ||
    identifiers.length < 1 ||
    identifiers.length > MAX_ORDER_IDENTIFIERS ||
    members !== 1 + (profile === undefined ? 0 : 1) + (replaces === undefined ? 0 : 1)
  )
    return undefined;
  const out: AcmeNewOrder['identifiers'] = [];
  for (const item of identifiers as unknown[]) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
    const { type, value } = item as Record<string, unknown>;
    if ((type !== 'dns' && type !== 'ip') || !boundedString(value, 253)) return undefined;
    if (Object.keys(item).length !== 2) return undefined;
    out.push({ type, value });
  }
  const parsed: AcmeNewOrder = { identifiers: out };
  if (profile !== undefined) {
    if (!boundedString(profile, 64)) return undefined;
    parsed.profile = profile;
  }
  if (replaces !== undefined) {
    if (!boundedString(replaces, MAX_CERT_ID_LENGTH)) return undefined;
    parsed.replaces = replaces;
  }
  return parsed;
}

/** A newOrder payload, validated: the same result and the same errors as {@link acmeNewOrderSchema}. */
export function parseNewOrder(input: unknown): AcmeNewOrder {
  return plainNewOrder(input) ?? parseInput(acmeNewOrderSchema, input);
}
