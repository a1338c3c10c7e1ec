import { TemplateError } from './errors.js';
import { formatFloat } from './go-float.js';
import { formatValue, goType, kindOf, MISSING, normalize, sortedKeys, type Value } from './values.js';

/**
 * Go's `fmt.Sprintf` for template values: verbs `v s q d x X o O b c U e E f F g G t %`, flags
 * `+ - # 0 space`, width and precision (digits or `*`). Wrong verbs print Go's diagnostics
 * (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int=1)`). Where JavaScript has one number type,
 * an integral value takes both integer and float verbs (`%.1f` of 85 is `85.0`).
 * Explicit argument indexes (`%[1]d`) are refused.
 */

interface Spec {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  width: number | undefined;
  prec: number | undefined;
}

/** The largest width or precision honoured; larger is refused (it would only make output). */
const MAX_PAD = 10_000;

export function sprintf(format: string, args: readonly Value[], pos: number): string {
  let out = '';
  let argIndex = 0;
  let i = 0;
  while (i < format.length) {
    const percent = format.indexOf('%', i);
    if (percent < 0) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, percent);
    i = percent + 1;
    const spec: Spec = {
      plus: false,
      minus: false,
      sharp: false,
      space: false,
      zero: false,
      width: undefined,
      prec: undefined,
    };
    for (; i < format.length; i++) {
      const c = format[i];
      if (c === '+') spec.plus = true;
      else if (c === '-') spec.minus = true;
      else if (c === '#') spec.sharp = true;
      else if (c === ' ') spec.space = true;
      else if (c === '0') spec.zero = true;
      else break;
    }
    let badWidth = false;
    let badPrec = false;
    if (format[i] === '[')
      throw new TemplateError('printf: explicit argument indexes (%[n]) are not supported', pos);
    if (format[i] === '*') {
      i++;
      const w = args[argIndex++];
      if (kindOf(w) === 'int' && Math.abs(w as number) <= MAX_PAD) {
        spec.width = Math.abs(w as number);
        if ((w as number) < 0) spec.minus = true;
      } else badWidth = true;
    } else {
      const m = /^\d+/.exec(format.slice(i));
      if (m) {
        spec.width = Number(m[0]);
        i += m[0].length;
      }
    }
    if (format[i] === '.') {
      i++;
      if (format[i] === '*') {
        i++;
        const p = args[argIndex++];
        if (kindOf(p) === 'int' && (p as number) >= 0 && (p as number) <= MAX_PAD) spec.prec = p as number;
        else badPrec = true;
      } else {
        const m = /^\d+/.exec(format.slice(i));
        spec.prec = m ? Number(m[0]) : 0;
        i += m ? m[0].length : 0;
      }
    }
    if ((spec.width ?? 0) > MAX_PAD || (spec.prec ?? 0) > MAX_PAD) {
      throw new TemplateError(`printf: width or precision above ${MAX_PAD}`, pos);
    }
    if (spec.minus) spec.zero = false;
    if (badWidth) out += '%!(BADWIDTH)';
    if (badPrec) out += '%!(BADPREC)';
    if (i >= format.length) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatArg(args[argIndex++], verb, spec);
  }
  if (argIndex < args.length) {
    out += `%!(EXTRA ${args
      .slice(argIndex)
      .map((a) => `${goType(a)}=${formatValue(a)}`)
      .join(', ')})`;
  }
  return out;
}

function pad(text: string, spec: Spec, zeroAllowed: boolean): string {
  const width = spec.width ?? 0;
  const length = [...text].length;
  if (length >= width) return text;
  const fill = width - length;
  if (spec.minus) return text + ' '.repeat(fill);
  if (spec.zero && zeroAllowed) {
    const sign = /^[+\- ]/.test(text) ? text[0]! : '';
    return sign + '0'.repeat(fill) + text.slice(sign.length);
  }
  return ' '.repeat(fill) + text;
}

const badVerb = (value: Value, verb: string): string =>
  kindOf(value) === 'nil' || kindOf(value) === 'missing'
    ? `%!${verb}(<nil>)`
    : `%!${verb}(${goType(value)}=${formatValue(value)})`;

function withSign(text: string, spec: Spec): string {
  if (text.startsWith('-')) return text;
  if (spec.plus) return `+${text}`;
  if (spec.space) return ` ${text}`;
  return text;
}

function formatArg(raw: Value, verb: string, spec: Spec): string {
  const value = normalize(raw === MISSING ? null : raw);
  const kind = kindOf(value);
  if (kind === 'array') {
    return pad(
      `[${(value as Value[]).map((e) => formatArg(e, verb, { ...spec, width: undefined })).join(' ')}]`,
      spec,
      false,
    );
  }
  if (kind === 'map') {
    const map = value as Record<string, Value>;
    const inner = { ...spec, width: undefined };
    return pad(
      `map[${sortedKeys(map)
        .map((k) => `${formatArg(k, verb, inner)}:${formatArg(map[k], verb, inner)}`)
        .join(' ')}]`,
      spec,
      false,
    );
  }
  switch (kind) {
    case 'nil':
      return verb === 'v' ? pad('<nil>', spec, false) : badVerb(value, verb);
    case 'bool':
      return verb === 'v' || verb === 't' ? pad(value ? 'true' : 'false', spec, false) : badVerb(value, verb);
    case 'string':
      return formatString(value as string, verb, spec) ?? badVerb(value, verb);
    case 'int':
      return formatInteger(value as number, verb, spec) ?? badVerb(value, verb);
    case 'float':
      return formatFloatArg(value as number, verb, spec) ?? badVerb(value, verb);
    default:
      return badVerb(value, verb);
  }
}

function formatString(s: string, verb: string, spec: Spec): string | undefined {
  switch (verb) {
    case 'v':
    case 's':
      return pad(spec.prec === undefined ? s : [...s].slice(0, spec.prec).join(''), spec, false);
    case 'q': {
      const text = spec.prec === undefined ? s : [...s].slice(0, spec.prec).join('');
      if (spec.sharp && canBackquote(text)) return pad(`\`${text}\``, spec, false);
      return pad(goQuote(text, '"', spec.plus), spec, false);
    }
    case 'x':
    case 'X': {
      let bytes = Buffer.from(s, 'utf8');
      if (spec.prec !== undefined) bytes = bytes.subarray(0, spec.prec);
      const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0'));
      const prefixed = spec.sharp ? hex.map((h, i) => (spec.space || i === 0 ? `0x${h}` : h)) : hex;
      const text = prefixed.join(spec.space ? ' ' : '');
      return pad(verb === 'X' ? text.toUpperCase() : text, spec, false);
    }
    default:
      return undefined;
  }
}

function formatInteger(n: number, verb: string, spec: Spec): string | undefined {
  const negative = n < 0;
  const magnitude = BigInt(Math.abs(n));
  // Go's two ways to ask for leading zeros: a precision, or the 0 flag with a width (the
  // digits then fill the width less the sign; a 0x prefix comes on top).
  let digitsWanted = spec.prec;
  if (digitsWanted === undefined && spec.zero && spec.width !== undefined) {
    digitsWanted = spec.width - (negative || spec.plus || spec.space ? 1 : 0);
  }
  const digitsIn = (radix: number): string => {
    const digits = magnitude.toString(radix);
    if (digitsWanted === undefined) return digits;
    return digitsWanted === 0 && magnitude === 0n ? '' : digits.padStart(digitsWanted, '0');
  };
  const number = (prefix: string, radix: number, upper = false) => {
    const body = prefix + (upper ? digitsIn(radix).toUpperCase() : digitsIn(radix));
    return pad(withSign((negative ? '-' : '') + body, spec), spec, false);
  };
  switch (verb) {
    case 'v':
    case 'd':
      return number('', 10);
    case 'b':
      return number(spec.sharp ? '0b' : '', 2);
    case 'o':
      return number(spec.sharp ? '0' : '', 8);
    case 'O':
      return number('0o', 8);
    case 'x':
      return number(spec.sharp ? '0x' : '', 16);
    case 'X':
      return number(spec.sharp ? '0X' : '', 16, true);
    case 'c':
      return pad(runeText(n), spec, false);
    case 'q':
      return pad(goQuote(runeText(n), "'", spec.plus), spec, false);
    case 'U': {
      const hex = magnitude
        .toString(16)
        .toUpperCase()
        .padStart(Math.max(4, spec.prec ?? 0), '0');
      const text = negative ? `U+-${hex}` : `U+${hex}`;
      return pad(
        spec.sharp && !negative && isPrint(runeText(n)) ? `${text} '${runeText(n)}'` : text,
        spec,
        false,
      );
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      return formatFloatArg(n, verb, spec);
    default:
      return undefined;
  }
}

function formatFloatArg(x: number, verb: string, spec: Spec): string | undefined {
  let goVerb: 'e' | 'E' | 'f' | 'F' | 'g' | 'G';
  let prec = spec.prec ?? -1;
  switch (verb) {
    case 'v':
      goVerb = 'g';
      prec = -1;
      break;
    case 'e':
    case 'E':
    case 'f':
    case 'F':
      goVerb = verb;
      if (spec.prec === undefined) prec = 6;
      break;
    case 'g':
    case 'G':
      goVerb = verb;
      break;
    default:
      return undefined;
  }
  const text = withSign(formatFloat(x, goVerb, prec), spec);
  // Infinities and NaN are padded with spaces, never zeros.
  return pad(text, spec, Number.isFinite(x));
}

function runeText(n: number): string {
  return Number.isInteger(n) && n >= 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff)
    ? String.fromCodePoint(n)
    : '\ufffd';
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const isPrint = (ch: string): boolean => PRINTABLE.test(ch);

function canBackquote(s: string): boolean {
  return [...s].every((ch) => ch !== '`' && ch !== '\ufeff' && (ch === '\t' || isPrint(ch)));
}

const QUOTE_ESCAPES: Record<string, string> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
};

/** Go's `strconv.Quote` (`asciiOnly`: `strconv.QuoteToASCII`) with `quote` as delimiter. */
export function goQuote(s: string, quote: '"' | "'", asciiOnly = false): string {
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote) out += `\\${quote}`;
    else if (ch in QUOTE_ESCAPES) out += QUOTE_ESCAPES[ch];
    else if (isPrint(ch) && (!asciiOnly || cp < 0x80)) out += ch;
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return out + quote;
}
