import { z } from 'zod';
import { idSchema } from '../domain/common.js';
import { NAMED_KIND_NAMES, NAMED_KINDS, type NamedKind } from '../domain/names.js';
import type { Permission } from '../domain/permissions.js';
import { validationError } from '../errors.js';
import type { ServiceDeps } from './context.js';
import { commaList, parseInput } from './input.js';

/**
 * Bounds of one request: a page of a list names a few dozen related records (25 inventory rows
 * → at most 75 issuer, owner and team ids), so these leave room without letting a request turn
 * into a dump of every name.
 */
export const NAMES_LIMITS = Object.freeze({ perKind: 100, total: 500 });

const idList = (kind: NamedKind) =>
  commaList(idSchema)
    .optional()
    .describe(`${kind} ids, comma-separated (at most ${NAMES_LIMITS.perKind}; needs ${NAMED_KINDS[kind]})`);

/** One optional comma-separated id list per kind: `?issuer=a,b&owner=c`. */
export const namesQuerySchema = z.strictObject(
  Object.fromEntries(NAMED_KIND_NAMES.map((kind) => [kind, idList(kind)])) as Record<
    NamedKind,
    ReturnType<typeof idList>
  >,
);
export type NamesQuery = Partial<Record<NamedKind, string | string[]>>;

export interface ResolvedNames {
  /** Per kind asked for and permitted: id → name; ids of no record are absent. */
  names: Partial<Record<NamedKind, Record<string, string>>>;
  /** Kinds asked for whose read permission the caller lacks: nothing is said about them. */
  withheld: NamedKind[];
}

/**
 * Names of related records for a page of a list, all kinds in one call: a console page asks
 * once for the names its rows refer to instead of reading each record (docs/api/inventory.md).
 */
export class NameService {
  constructor(private readonly deps: ServiceDeps) {}

  async resolve(
    query: NamesQuery,
    may: (permission: Permission) => boolean,
    tenantId: string,
  ): Promise<ResolvedNames> {
    const q = parseInput(namesQuerySchema, query) as Partial<Record<NamedKind, string[]>>;
    const asked = NAMED_KIND_NAMES.filter((kind) => q[kind] !== undefined);
    const fields = asked
      .filter((kind) => new Set(q[kind]).size > NAMES_LIMITS.perKind)
      .map((kind) => ({ field: kind, message: `at most ${NAMES_LIMITS.perKind} ids` }));
    if (fields.length > 0) throw validationError(fields);
    const total = asked.reduce((n, kind) => n + new Set(q[kind]).size, 0);
    if (total > NAMES_LIMITS.total) {
      throw validationError([{ field: 'query', message: `at most ${NAMES_LIMITS.total} ids in all` }]);
    }
    const withheld = asked.filter((kind) => !may(NAMED_KINDS[kind]));
    const allowed = asked.filter((kind) => may(NAMED_KINDS[kind]));
    const found = await Promise.all(
      allowed.map((kind) => this.deps.storage.names.namesOf(kind, q[kind] ?? [], tenantId)),
    );
    const names: ResolvedNames['names'] = {};
    allowed.forEach((kind, i) => {
      names[kind] = Object.fromEntries(found[i]!);
    });
    return { names, withheld };
  }
}
