/**
 * Go's `strconv.FormatFloat` for the verbs `e E f F g G` on float64, with Go's rounding (the
 * exact binary value rounded half to even — not JavaScript's `toFixed`, which rounds ties up)
 * and Go's shortest representation (`prec` -1, as `%v` prints floats).
 */

const view = new DataView(new ArrayBuffer(8));

/** |x| = m · 2^e exactly. */
function decompose(x: number): { m: bigint; e: number } {
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  return exponent === 0 ? { m: fraction, e: -1074 } : { m: fraction | (1n << 52n), e: exponent - 1075 };
}

/** round-half-even(|x| · 10^k); `k` may be negative. */
function scaledRound(x: number, k: number): bigint {
  const { m, e } = decompose(x);
  let num = e >= 0 ? m << BigInt(e) : m;
  let den = e >= 0 ? 1n : 1n << BigInt(-e);
  if (k >= 0) num *= 10n ** BigInt(k);
  else den *= 10n ** BigInt(-k);
  const q = num / den;
  const twice = (num % den) * 2n;
  return twice > den || (twice === den && (q & 1n) === 1n) ? q + 1n : q;
}

/** Decimal digits without trailing zeros and the decimal point position (value = 0.d₁d₂… · 10^dp). */
interface Digits {
  d: string;
  dp: number;
}

const trimZeros = (d: string): string => d.replace(/0+$/, '') || '0';

/** |x| rounded to `n` significant digits (n ≥ 1). */
function significant(x: number, n: number): Digits {
  if (x === 0) return { d: '0', dp: 1 };
  let exp = Math.floor(Math.log10(Math.abs(x)));
  for (let i = 0; i < 4; i++) {
    const q = scaledRound(x, n - 1 - exp);
    const text = q.toString();
    if (text.length > n) exp++;
    else if (text.length < n) exp--;
    else return { d: trimZeros(text), dp: exp + 1 };
  }
  // Unreachable for finite doubles; the loop settles in one or two steps.
  return { d: trimZeros(scaledRound(x, n - 1 - exp).toString()), dp: exp + 1 };
}

/** The shortest digits that read back as `x` (ECMAScript and Go both produce these). */
function shortest(x: number): Digits {
  if (x === 0) return { d: '0', dp: 1 };
  const [mantissa, exponent] = Math.abs(x).toExponential().split('e') as [string, string];
  return { d: trimZeros(mantissa.replace('.', '')), dp: Number(exponent) + 1 };
}

const digitAt = (digits: Digits, i: number): string => (i >= 0 && i < digits.d.length ? digits.d[i]! : '0');

function fmtE(digits: Digits, decimals: number, upper: boolean): string {
  let out = digits.d[0]!;
  if (decimals > 0) {
    out += '.';
    for (let i = 1; i <= decimals; i++) out += digitAt(digits, i);
  }
  const exp = digits.d === '0' ? 0 : digits.dp - 1;
  const magnitude = String(Math.abs(exp)).padStart(2, '0');
  return `${out}${upper ? 'E' : 'e'}${exp < 0 ? '-' : '+'}${magnitude}`;
}

function fmtF(digits: Digits, decimals: number): string {
  let out = digits.dp > 0 ? '' : '0';
  for (let i = 0; i < digits.dp; i++) out += digitAt(digits, i);
  if (decimals > 0) {
    out += '.';
    for (let i = 0; i < decimals; i++) out += digitAt(digits, digits.dp + i);
  }
  return out;
}

/** Formats the magnitude of finite `x`; `prec` -1 means the shortest representation. */
function formatMagnitude(x: number, verb: string, prec: number): string {
  switch (verb) {
    case 'e':
    case 'E': {
      if (prec < 0) {
        const digits = shortest(x);
        return fmtE(digits, digits.d.length - 1, verb === 'E');
      }
      return fmtE(significant(x, prec + 1), prec, verb === 'E');
    }
    case 'f':
    case 'F': {
      if (prec < 0) {
        const digits = shortest(x);
        return fmtF(digits, Math.max(digits.d.length - digits.dp, 0));
      }
      const scaled = scaledRound(x, prec)
        .toString()
        .padStart(prec + 1, '0');
      return prec === 0 ? scaled : `${scaled.slice(0, -prec)}.${scaled.slice(-prec)}`;
    }
    default: {
      // 'g' / 'G'
      const isShortest = prec < 0;
      let p = prec === 0 ? 1 : prec;
      const digits = isShortest ? shortest(x) : significant(x, p);
      const nd = digits.d === '0' ? 0 : digits.d.length;
      if (isShortest) p = nd;
      let eprec = p;
      if (eprec > nd && nd >= digits.dp) eprec = nd;
      if (isShortest) eprec = 6;
      const exp = digits.dp - 1;
      if (nd > 0 && (exp < -4 || exp >= eprec)) {
        return fmtE(digits, Math.min(p, nd) - 1, verb === 'G');
      }
      if (p > digits.dp) p = nd;
      return fmtF(digits, Math.max(p - digits.dp, 0));
    }
  }
}

/** Go's formatting of a float64: sign, magnitude, `+Inf`/`-Inf`/`NaN`. */
export function formatFloat(x: number, verb: 'e' | 'E' | 'f' | 'F' | 'g' | 'G', prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const negative = x < 0 || Object.is(x, -0);
  return (negative ? '-' : '') + formatMagnitude(x, verb, prec);
}
