import type { CertwrightClient, RawInput } from '@certwright/client';
import { UsageError } from './exit-codes.js';

/** What one bulk operation does to a certificate, and which certificates it leaves as they are. */
interface BulkAction {
  verb: string;
  /** Why a selected certificate is left unchanged, if it is. */
  skips(cert: Certificate): string | undefined;
  /** Criteria the operation adds on its own. */
  forced?: Record<string, unknown>;
}

const NOT_RENEWED = new Set(['Archived', 'Revoked', 'Expired', 'RenewalInProgress']);

export const BULK: Record<string, BulkAction> = {
  bulkRevokeCertificates: {
    verb: 'revoke',
    skips: (c) => (c.status === 'Revoked' ? 'already revoked' : undefined),
  },
  estBulkRevokeCertificates: {
    verb: 'revoke',
    skips: (c) => (c.status === 'Revoked' ? 'already revoked' : undefined),
    forced: { source: 'EST' },
  },
  bulkRenewCertificates: {
    verb: 'renew',
    skips: (c) => (NOT_RENEWED.has(String(c.status)) ? String(c.status) : undefined),
  },
  bulkReassignCertificates: { verb: 'reassign', skips: () => undefined },
};

/** A reassignment leaves a certificate that already has the owner (and team) it names. */
const alreadyAssigned = (c: Certificate, body: Record<string, unknown>) =>
  c.owner_id === body.owner_id && (body.team_id === undefined || c.team_id === body.team_id);

export interface Certificate {
  id: string;
  name?: string;
  common_name?: string;
  status?: string;
  owner_id?: string;
  team_id?: string;
}

export interface BulkPreview {
  action: string;
  /** Every certificate the criteria select, up to the preview's limit. */
  selected: (Certificate & { change: string })[];
  /** Ids named in certificate_ids that do not exist. */
  not_found: string[];
  /** More certificates match than were read. */
  truncated: boolean;
  will_change: number;
  unchanged: number;
}

const FILTERS = ['profile_id', 'owner_id', 'agent_id', 'issuer_id', 'team_id', 'source'] as const;
/** The server's own cap on listed ids; a preview reads no more than that. */
const MAX_PREVIEW = 10_000;
const PARALLEL = 8;

/**
 * The certificates a bulk request would touch, read with the same criteria through the list
 * (and get) operations — nothing is changed. Criteria the server refuses (none at all, `source`
 * alone) give no preview: the request itself is refused without change.
 */
export async function previewBulk(
  client: CertwrightClient,
  operationId: string,
  input: RawInput,
): Promise<BulkPreview | undefined> {
  const action = BULK[operationId] as BulkAction;
  const body = { ...(input.body as Record<string, unknown>), ...action.forced };
  const ids = Array.isArray(body.certificate_ids) ? [...new Set(body.certificate_ids as string[])] : [];
  const filters = Object.fromEntries(
    FILTERS.filter(
      (f) => body[f] !== undefined && body[f] !== '' && operationId !== 'bulkReassignCertificates',
    ).map((f) => [f, body[f]]),
  );
  const narrowing = Object.keys(filters).some((f) => f !== 'source');
  if (ids.length === 0 && !narrowing) return undefined;

  let selected: Certificate[] = [];
  const notFound: string[] = [];
  let truncated = false;
  if (narrowing) {
    const wanted = ids.length > 0 ? new Set(ids) : undefined;
    for await (const page of client.pages('listCertificates', {
      query: { ...filters, per_page: 500 },
    } as never)) {
      const p = page as unknown as { data: Certificate[] };
      selected.push(...p.data.filter((c) => !wanted || wanted.has(c.id)));
      if (selected.length >= MAX_PREVIEW) {
        truncated = true;
        break;
      }
    }
  } else {
    const queue = [...ids];
    const found = new Map<string, Certificate>();
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          found.set(id, (await client.callRaw('getCertificate', { path: { id } })) as Certificate);
        } catch (error) {
          if ((error as { status?: number }).status === 404) notFound.push(id);
          else throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    selected = ids.flatMap((id) => (found.has(id) ? [found.get(id) as Certificate] : []));
  }
  const rows = selected.map((c) => {
    const skip = action.verb === 'reassign' && alreadyAssigned(c, body) ? 'owner already' : action.skips(c);
    const change = skip
      ? `unchanged (${skip})`
      : action.verb === 'reassign'
        ? `owner ${c.owner_id} → ${body.owner_id}${body.team_id ? `, team ${c.team_id} → ${body.team_id}` : ''}`
        : action.verb;
    return {
      id: c.id,
      name: c.name,
      common_name: c.common_name,
      status: c.status,
      owner_id: c.owner_id,
      change,
    };
  });
  const unchanged = rows.filter((r) => r.change.startsWith('unchanged')).length;
  return {
    action: action.verb,
    selected: rows,
    not_found: notFound.sort(),
    truncated,
    will_change: rows.length - unchanged,
    unchanged,
  };
}

/** The one line that says what would change. */
export function previewHeadline(preview: BulkPreview): string {
  const n = preview.will_change;
  return (
    `would ${preview.action} ${preview.truncated ? 'at least ' : ''}${n} certificate${n === 1 ? '' : 's'}` +
    (preview.unchanged > 0 ? ` (${preview.unchanged} more selected stay unchanged)` : '') +
    (preview.not_found.length > 0 ? `; not found: ${preview.not_found.slice(0, 10).join(', ')}` : '')
  );
}

/** One paragraph for the terminal: what would change, the first rows, what stays. */
export function describePreview(preview: BulkPreview, shown = 20): string {
  const lines = [previewHeadline(preview)];
  for (const row of preview.selected.slice(0, shown)) {
    lines.push(
      `  ${row.id}  ${row.name ?? ''}  ${row.common_name ?? ''}  ${row.status ?? ''}  ${row.change}`,
    );
  }
  if (preview.selected.length > shown) lines.push(`  … and ${preview.selected.length - shown} more`);
  return `${lines.join('\n')}\n`;
}

export interface ConfirmIo {
  stderr: { write(text: string): unknown; isTTY?: boolean };
  /** Asks on the terminal; absent when standard input is not one. */
  ask?: (question: string) => Promise<string>;
}

/**
 * Goes ahead only with `--yes`, or a "y" typed at the terminal; otherwise a usage error that
 * says how to go ahead. Nothing has been sent but reads when this refuses.
 */
export async function confirmBulk(
  label: string,
  preview: BulkPreview,
  yes: boolean,
  io: ConfirmIo,
): Promise<void> {
  io.stderr.write(describePreview(preview));
  if (yes) return;
  if (io.ask) {
    const answer = await io.ask(`${preview.action} ${preview.will_change} certificate(s)? [y/N] `);
    if (/^y(es)?$/i.test(answer.trim())) return;
    throw new UsageError(`${label}: not confirmed; nothing changed`);
  }
  throw new UsageError(
    `${label} changes ${preview.will_change} certificate(s): pass --yes to go ahead, or --dry-run to only list them`,
  );
}
