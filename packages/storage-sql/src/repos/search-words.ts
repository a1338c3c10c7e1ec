import type { Clock } from '@certwright/core';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';

/*
 * Which part of a search pattern the trigram index is asked for (PostgreSQL/PGlite).
 *
 * pg_trgm answers `search_text LIKE '%host-4242%'` by intersecting the posting lists of every
 * trigram of the pattern. A word found in nearly every row ("host", "com", the organisation's
 * domain) has trigrams whose lists are as long as the table, and stepping through them costs
 * most of the search while removing almost no row (docs/api/inventory.md, "Figures"). The index
 * is therefore given the pattern without the common words at its ends ('-4242' here), and the
 * whole pattern is still tested on each row the index returns, so the answer is the same.
 */

/** A run of ASCII letters and digits in a pattern: pg_trgm takes trigrams of words only. */
export interface PatternWord {
  word: string;
  start: number;
  end: number;
}

export function patternWords(pattern: string): PatternWord[] {
  return [...pattern.matchAll(/[a-z0-9]+/gi)].map((m) => ({
    word: m[0],
    start: m.index,
    end: m.index + m[0].length,
  }));
}

/**
 * The substring of `pattern` (lower-case ASCII) to look up in the trigram index: from the first
 * word that is not common to the last, each with the separator next to it (a separator tells
 * pg_trgm that the word starts or ends there, which adds the most selective trigrams).
 * `undefined` when that leaves nothing out, when every word is common, when the pattern is not
 * ASCII (pg_trgm's idea of a letter then depends on the locale), or when the part would yield no
 * trigram at all (the index would then return every row).
 */
export function indexedPart(
  pattern: string,
  isCommon: (word: string, key: string) => boolean,
): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (!/^[\x00-\x7f]*$/.test(pattern)) return undefined;
  const words = patternWords(pattern);
  const rare = words.filter((w) => !isCommon(w.word, wordKey(w, pattern)));
  const first = rare[0];
  const last = rare[rare.length - 1];
  if (!first || !last || rare.length === words.length) return undefined;
  const from = Math.max(0, first.start - 1);
  const to = Math.min(pattern.length, last.end + 1);
  if (from === 0 && to === pattern.length) return undefined;
  // pg_trgm pads a word with two blanks where it is known to start and one where it is known
  // to end; a padded word of three characters or more yields trigrams.
  const yieldsTrigrams = rare.some(
    (w) => (w.start > from ? 2 : 0) + w.word.length + (w.end < to ? 1 : 0) >= 3,
  );
  return yieldsTrigrams ? pattern.slice(from, to) : undefined;
}

/**
 * The words of `part` (lower-case) that yield a trigram, each as the key its share of the rows is
 * judged by (commonWords): the word, with `^` in front when a separator before it in `part` says
 * that it starts there and `$` behind when one after it says that it ends there. pg_trgm pads a
 * word with two blanks where it is known to start and one where it is known to end, so those
 * trigrams are only in rows where the word starts (ends) at a word boundary: `-1` selects the
 * numbers starting with 1, fewer rows than those containing a 1 anywhere.
 */
export function boundaryKeys(part: string): string[] {
  return patternWords(part)
    .filter((w) => (w.start > 0 ? 2 : 0) + w.word.length + (w.end < part.length ? 1 : 0) >= 3)
    .map((w) => wordKey(w, part));
}

/** The key of one word of `pattern` (boundaryKeys), whether or not it yields a trigram. */
export function wordKey(w: PatternWord, pattern: string): string {
  return `${w.start > 0 ? '^' : ''}${w.word}${w.end < pattern.length ? '$' : ''}`;
}

/**
 * Whether the trigram index, asked for `part` (lower-case), narrows the rows down: `part` is
 * ASCII and one of its boundaryKeys is not common. Otherwise the index returns about every row
 * of the scope (common words' trigrams are in nearly all of them) or, without a trigram, reads
 * the whole index.
 */
export function narrowsIndex(part: string, isCommon: (key: string) => boolean): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (!/^[\x00-\x7f]*$/.test(part)) return false;
  return boundaryKeys(part).some((k) => !isCommon(k));
}

/** A word is common when at least this share of the rows contains it. */
const COMMON_SHARE = 0.5;

/**
 * A key of boundaryKeys (or a plain word) as a regular expression over search_text: the word
 * itself, after a non-alphanumeric character or the start for `^`, before one or the end for `$`.
 * Words are ASCII letters and digits only, so nothing in them needs escaping (nor is a comma).
 */
function keyPattern(key: string): string {
  const word = key.replace(/^\^/, '').replace(/\$$/, '');
  return `${key.startsWith('^') ? '(^|[^a-z0-9])' : ''}${word}${key.endsWith('$') ? '([^a-z0-9]|$)' : ''}`;
}

/**
 * The words of `words` (or boundaryKeys: the word where it starts or ends) that at least half
 * the certificates contain, judged on the planner's own
 * sample of `search_text` (pg_stats: the most common values with their frequencies, and the
 * histogram, whose entries each stand for an equal share of the other rows) — statistics that
 * ANALYZE keeps current, read in one round trip without touching the table. Without statistics
 * (a table never analyzed) no word is common. PostgreSQL/PGlite only.
 */
export async function commonWords(db: Kysely<Database>, words: readonly string[]): Promise<Set<string>> {
  const { rows } = await sql<{ word: string; share: number | string | null }>`
    select w.word,
      coalesce((select sum(m.f) from unnest(s.most_common_vals::text::text[], s.most_common_freqs) as m(v, f)
        where m.v ~ w.re), 0)
      + (1 - s.null_frac - coalesce((select sum(f) from unnest(s.most_common_freqs) as f), 0))
        * coalesce((select count(*) from unnest(s.histogram_bounds::text::text[]) as h(v)
          where h.v ~ w.re)::float8 / nullif(cardinality(s.histogram_bounds::text::text[]), 0), 0)
        as share
    from pg_stats s, unnest(string_to_array(${words.join(',')}, ','),
      string_to_array(${words.map(keyPattern).join(',')}, ',')) as w(word, re)
    where s.schemaname = current_schema() and s.tablename = 'certificates' and s.attname = 'search_text'`.execute(
    db,
  );
  return new Set(rows.filter((r) => Number(r.share) >= COMMON_SHARE).map((r) => r.word));
}

/** How long a verdict on a word is reused: the statistics change only when ANALYZE runs again. */
const VERDICT_TTL_MS = 10 * 60_000;
const MAX_VERDICTS = 1_000;

/**
 * commonWords, each word's verdict remembered for ten minutes: planning a query of the pg_stats
 * view takes a few milliseconds (more than the search it shortens once the index is asked for
 * the rare part), and a word's share of the rows moves slowly. At most a thousand verdicts are
 * kept; the map starts over when full.
 */
export function rememberedCommonWords(
  clock: Clock,
): (db: Kysely<Database>, words: readonly string[]) => Promise<Set<string>> {
  const verdicts = new Map<string, { common: boolean; until: number }>();
  return async (db, words) => {
    const now = clock.now().getTime();
    const unknown = words.filter((w) => (verdicts.get(w)?.until ?? 0) <= now);
    if (unknown.length > 0) {
      const common = await commonWords(db, unknown);
      if (verdicts.size + unknown.length > MAX_VERDICTS) verdicts.clear();
      for (const w of unknown) verdicts.set(w, { common: common.has(w), until: now + VERDICT_TTL_MS });
    }
    return new Set(words.filter((w) => verdicts.get(w)?.common === true));
  };
}
