import { isIPv4, isIPv6 } from 'node:net';
import { CertwrightError } from '../errors.js';

/** IP address text ⇄ the 4- or 16-byte form of the iPAddress GeneralName (RFC 5280 §4.2.1.6). */

export function ipToBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) {
    throw new CertwrightError('validation_failed', `'${ip}' is not an IP address`, {
      fields: [{ field: 'san', message: `'${ip}' is not an IP address` }],
    });
  }
  let text = ip.split('%')[0]!;
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const b = v4[1]!.split('.').map(Number);
    tail.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
    text = text.slice(0, -v4[1]!.length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const parse = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  const groups =
    rest === undefined
      ? [...left, ...tail]
      : [
          ...left,
          ...new Array<number>(8 - left.length - right.length - tail.length).fill(0),
          ...right,
          ...tail,
        ];
  const out = Buffer.alloc(16);
  for (let i = 0; i < groups.length; i++) out.writeUInt16BE(groups[i]!, i * 2);
  return out;
}

export function bytesToIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  if (bytes.length !== 16) return `invalid(${Buffer.from(bytes).toString('hex')})`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // RFC 5952: compress the longest run (length ≥ 2) of zero groups, the first one on ties.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}
