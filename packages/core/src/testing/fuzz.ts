/**
 * Building blocks of the parser fuzz campaigns (core/pki's, and the CMS, EST, SCEP and ACME
 * parsers to come): mutation of real seeds, random DER trees, text mutation, and a runner that
 * reports every untyped escape, the slowest case and the peak heap growth. A parser passes
 * when every input is either accepted or refused with a CertwrightError.
 */
import { getHeapStatistics } from 'node:v8';
import fc from 'fast-check';
import { isCertwrightError } from '../errors.js';
import { tlv, tlvOf } from '../pki/der.js';
import { children, isConstructed, readRoot } from '../pki/der-reader.js';

export interface FuzzTarget<T = unknown> {
  name: string;
  /** What it covers, for the report. */
  covers: string;
  inputs: fc.Arbitrary<T>;
  // Method syntax: a target of any input type is a FuzzTarget<unknown> to the runner.
  run(input: T): unknown;
  /** Size of an input in bytes (UTF-16 code units for text), for memory ratios. */
  size(input: T): number;
  /** A printable form of an input, for findings. */
  show(input: T): string;
}

/** Start offsets of every TLV of a valid DER value, to aim length and tag edits at headers. */
function headers(buf: Uint8Array): number[] {
  const out: number[] = [];
  try {
    const stack = [readRoot(buf)];
    while (stack.length > 0) {
      const node = stack.pop()!;
      out.push(node.start);
      if (isConstructed(node)) stack.push(...children(buf, node));
    }
  } catch {
    // A seed that is not DER (none today) is mutated without header hints.
  }
  return out.length > 0 ? out : [0];
}

// ---------------------------------------------------------------------------------------------
// Mutations

type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'length'; node: number; value: number; form: number }
  | { kind: 'tag'; node: number; tag: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'cut'; at: number; length: number }
  | { kind: 'splice'; donor: number; from: number; length: number; at: number };

const INTERESTING_TAGS = [
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0a, 0x0c, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1a, 0x1c, 0x1e,
  0x1f, 0x30, 0x31, 0x80, 0x81, 0x82, 0x86, 0x87, 0xa0, 0xa1, 0xa2, 0xa3, 0xbf, 0xff,
];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('length' as const),
    node: fc.nat(),
    value: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.nat(0xff), fc.nat(0xffffff), fc.constant(0x7fffffff)),
    form: fc.nat(4),
  }),
  fc.record({
    kind: fc.constant('tag' as const),
    node: fc.nat(),
    tag: fc.oneof(fc.constantFrom(...INTERESTING_TAGS), fc.nat(0xff)),
  }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({
    kind: fc.constant('splice' as const),
    donor: fc.nat(),
    from: fc.nat(),
    length: fc.integer({ min: 1, max: 256 }),
    at: fc.nat(),
  }),
);

/** Encodes `value` as a DER length field in one of several forms, some of them illegal. */
function lengthField(value: number, form: number): number[] {
  if (value < 0) return [];
  const bytes: number[] = [];
  for (let v = value; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  switch (form) {
    case 0:
      return value < 0x80 ? [value] : [0x80 | bytes.length, ...bytes];
    case 1:
      return [0x80]; // indefinite
    case 2:
      return [0x81 + bytes.length, 0, ...bytes]; // non-minimal
    case 3:
      return [0x85, 0, ...bytes.slice(-4).concat([0, 0, 0, 0]).slice(0, 4)]; // too long a length field
    default:
      return [value & 0xff];
  }
}

function mutate(seed: Uint8Array, seedHeaders: number[], donors: Uint8Array[], ops: Mutation[]): Buffer {
  let b = Buffer.from(seed);
  for (const op of ops) {
    const len = b.length;
    switch (op.kind) {
      case 'flip':
        if (len > 0) b[op.at % len]! ^= 1 << op.bit;
        break;
      case 'truncate':
        b = b.subarray(0, op.at % (len + 1));
        break;
      case 'length': {
        const at = seedHeaders[op.node % seedHeaders.length]! + 1;
        if (at >= len) break;
        const first = b[at]!;
        const old = first < 0x80 ? 1 : 1 + (first & 0x7f);
        const current = first < 0x80 ? first : 0;
        const value = op.value <= 3 && op.value >= -3 ? current + op.value : op.value;
        b = Buffer.concat([
          b.subarray(0, at),
          Buffer.from(lengthField(value, op.form)),
          b.subarray(Math.min(len, at + old)),
        ]);
        break;
      }
      case 'tag': {
        const at = seedHeaders[op.node % seedHeaders.length]!;
        if (at < len) b[at] = op.tag;
        break;
      }
      case 'insert': {
        const at = op.at % (len + 1);
        b = Buffer.concat([b.subarray(0, at), op.bytes, b.subarray(at)]);
        break;
      }
      case 'cut': {
        const at = op.at % (len + 1);
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + op.length)]);
        break;
      }
      case 'splice': {
        const donor = donors[op.donor % donors.length]!;
        const from = op.from % (donor.length + 1);
        const at = op.at % (len + 1);
        b = Buffer.concat([b.subarray(0, at), donor.subarray(from, from + op.length), b.subarray(at)]);
        break;
      }
    }
  }
  return b;
}

/** Seeds mutated by one to four edits (and, one time in twenty, left intact). */
export function mutated(seedList: Uint8Array[], donors: Uint8Array[] = seedList): fc.Arbitrary<Buffer> {
  const hints = seedList.map(headers);
  return fc
    .record({ seed: fc.nat(seedList.length - 1), ops: fc.array(mutation, { minLength: 0, maxLength: 4 }) })
    .map(({ seed, ops }) => mutate(seedList[seed]!, hints[seed]!, donors, ops));
}

/** Random DER trees, mostly well-formed on the outside, with interesting tags and contents. */
export const randomDer: fc.Arbitrary<Buffer> = fc.letrec<{
  node: Buffer;
  primitive: Buffer;
  constructed: Buffer;
}>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('primitive'), tie('constructed')),
  primitive: fc
    .record({
      tag: fc.constantFrom(
        0x01,
        0x02,
        0x03,
        0x04,
        0x05,
        0x06,
        0x0c,
        0x13,
        0x16,
        0x17,
        0x18,
        0x1c,
        0x1e,
        0x80,
        0x82,
        0x87,
      ),
      content: fc.oneof(
        fc.uint8Array({ maxLength: 24 }),
        fc.constantFrom(
          Buffer.from('ffffffff', 'hex'),
          Buffer.from('0000d800', 'hex'),
          Buffer.from('c328', 'hex'),
          Buffer.from('991231235959Z'),
          Buffer.from('20240230000000Z'),
          Buffer.from('2a864886f70d', 'hex'),
          Buffer.from('80', 'hex'),
          Buffer.from('00ff', 'hex'),
        ),
      ),
    })
    .map(({ tag, content }) => tlv(tag, content)),
  constructed: fc
    .record({
      tag: fc.constantFrom(0x30, 0x31, 0xa0, 0xa1, 0xa2, 0xa3),
      items: fc.array(tie('node'), { maxLength: 5 }),
    })
    .map(({ tag, items }) => tlvOf(tag, items)),
})).node;

/** Text seeds mutated by edits drawn from `fragments`. */
export function mutatedText(seedTexts: string[], fragments: string[]): fc.Arbitrary<string> {
  const edit = fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.constantFrom(...fragments) }),
    fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 32 }) }),
    fc.record({
      kind: fc.constant('repeat' as const),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: 16 }),
      times: fc.integer({ min: 2, max: 400 }),
    }),
    fc.record({
      kind: fc.constant('char' as const),
      at: fc.nat(),
      text: fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
    }),
  );
  return fc
    .record({ seed: fc.nat(seedTexts.length - 1), edits: fc.array(edit, { maxLength: 4 }) })
    .map(({ seed, edits }) => {
      let t = seedTexts[seed]!;
      for (const e of edits) {
        const at = e.at % (t.length + 1);
        if (e.kind === 'insert' || e.kind === 'char') t = t.slice(0, at) + e.text + t.slice(at);
        else if (e.kind === 'cut') t = t.slice(0, at) + t.slice(at + e.length);
        else t = t.slice(0, at) + t.slice(at, at + e.length).repeat(e.times) + t.slice(at + e.length);
      }
      return t;
    });
}

// ---------------------------------------------------------------------------------------------
// Running

export interface FuzzReport {
  target: string;
  cases: number;
  /** Inputs refused with a CertwrightError. */
  refused: number;
  /** Inputs that escaped as anything else: each one is a bug. */
  untyped: { input: string; error: string }[];
  /** The slowest case, re-timed alone (best of five) so that a GC pause or a busy CPU does not count. */
  slowestMs: number;
  slowestInput: string;
  /** Largest heap growth during one case, and the largest growth per input byte (inputs ≥ 256 bytes). */
  peakHeapBytes: number;
  peakHeapRatio: number;
}

/** Cases run before heap growth is recorded: the first ones also pay for compiling the parsers. */
const WARM_UP = 1_000;
/** Slowest inputs kept for re-timing. */
const SLOW_KEPT = 5;

/**
 * Runs `cases` seeded inputs through a target and reports every untyped failure (it does not
 * stop at the first), the slowest case and the peak heap growth. Heap growth is measured
 * without forcing GC: a case during which a collection ran shows no growth and is skipped.
 */
export function fuzzTarget(target: FuzzTarget<unknown>, cases: number, seed: number): FuzzReport {
  const report: FuzzReport = {
    target: target.name,
    cases: 0,
    refused: 0,
    untyped: [],
    slowestMs: 0,
    slowestInput: '',
    peakHeapBytes: 0,
    peakHeapRatio: 0,
  };
  const slow: { ms: number; input: unknown }[] = [];
  const once = (input: unknown): unknown => {
    try {
      return target.run(input);
    } catch (e) {
      if (isCertwrightError(e)) {
        report.refused++;
        return e;
      }
      if (report.untyped.length < 20) {
        report.untyped.push({ input: target.show(input).slice(0, 2000), error: String(e).slice(0, 300) });
      }
      return e;
    }
  };
  fc.check(
    fc.property(target.inputs, (input) => {
      report.cases++;
      const heapBefore = getHeapStatistics().used_heap_size;
      const start = performance.now();
      const result = once(input);
      const ms = performance.now() - start;
      const grown = getHeapStatistics().used_heap_size - heapBefore;
      keep(result);
      if (slow.length < SLOW_KEPT || ms > slow[slow.length - 1]!.ms) {
        slow.push({ ms, input });
        slow.sort((a, b) => b.ms - a.ms);
        slow.length = Math.min(slow.length, SLOW_KEPT);
      }
      if (report.cases > WARM_UP && grown > 0) {
        report.peakHeapBytes = Math.max(report.peakHeapBytes, grown);
        const size = target.size(input);
        if (size >= 256) report.peakHeapRatio = Math.max(report.peakHeapRatio, grown / size);
      }
      return true;
    }),
    { seed, numRuns: cases },
  );
  const refusedBefore = report.refused;
  for (const { input } of slow) {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      keep(once(input));
      best = Math.min(best, performance.now() - start);
    }
    if (best > report.slowestMs) {
      report.slowestMs = best;
      report.slowestInput = target.show(input).slice(0, 200);
    }
  }
  report.refused = refusedBefore;
  return report;
}

let sink: unknown;
/** Holds a result until the heap was measured, so that its allocation counts. */
function keep(value: unknown): void {
  sink = value;
}
export const lastResult = (): unknown => sink;

/** A fast-check property that holds when a target throws nothing but CertwrightErrors. */
export const typedOnly = (target: FuzzTarget<unknown>) =>
  fc.property(target.inputs, (input) => {
    try {
      target.run(input);
    } catch (e) {
      if (!isCertwrightError(e)) throw e;
    }
  });
