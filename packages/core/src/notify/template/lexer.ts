import { TemplateError } from './errors.js';

/**
 * Tokens of the Go text/template subset. Text outside `{{ }}` is one `text` token (already
 * trimmed by `{{-` / `-}}` markers); comments produce nothing. Positions are UTF-16 offsets
 * into the source, turned into line and column only when an error is reported.
 */
export type TokenType =
  | 'text'
  | 'left' // {{
  | 'right' // }}
  | 'space'
  | 'field' // .Name
  | 'dot' // .
  | 'variable' // $ or $name
  | 'identifier'
  | 'keyword'
  | 'string' // value already unquoted
  | 'number'
  | 'char' // character constant; value is the code point text
  | 'bool'
  | 'nil'
  | 'pipe'
  | 'leftParen'
  | 'rightParen'
  | 'comma'
  | 'declare' // :=
  | 'assign' // =
  | 'eof';

export interface Token {
  type: TokenType;
  /** The token's text (for strings: the unquoted value). */
  value: string;
  pos: number;
}

export const KEYWORDS = new Set([
  'if',
  'else',
  'end',
  'range',
  'with',
  'break',
  'continue',
  'define',
  'template',
  'block',
]);

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlnum = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{Nd}_]/u.test(c);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Tokens that may follow a field, variable or identifier directly. */
const isTerminator = (c: string | undefined): boolean =>
  c === undefined ||
  isSpace(c) ||
  c === '.' ||
  c === ',' ||
  c === '|' ||
  c === ':' ||
  c === ')' ||
  c === '(' ||
  c === '=';

export function lex(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let trimNextText = false;

  const pushText = (start: number, end: number, trimRight: boolean) => {
    let text = source.slice(start, end);
    if (trimNextText) text = text.replace(/^[ \t\r\n]+/, '');
    if (trimRight) text = text.replace(/[ \t\r\n]+$/, '');
    trimNextText = false;
    if (text.length > 0) tokens.push({ type: 'text', value: text, pos: start });
  };

  while (pos < source.length) {
    const open = source.indexOf('{{', pos);
    if (open < 0) {
      pushText(pos, source.length, false);
      pos = source.length;
      break;
    }
    const trimLeft = source[open + 2] === '-' && isSpace(source[open + 3]);
    pushText(pos, open, trimLeft);
    const inside = open + (trimLeft ? 4 : 2);
    if (source.startsWith('/*', inside)) {
      const close = source.indexOf('*/', inside + 2);
      if (close < 0) throw new TemplateError('unclosed comment', open);
      const after = close + 2;
      const right = rightDelimiter(source, after);
      if (!right) throw new TemplateError('comment ends before closing delimiter', after);
      trimNextText = right.trim;
      pos = after + right.length;
      continue;
    }
    tokens.push({ type: 'left', value: '{{', pos: open });
    pos = lexAction(source, inside, tokens);
    const right = rightDelimiter(source, pos);
    // lexAction stops only at a right delimiter (or throws).
    tokens.push({ type: 'right', value: '}}', pos });
    trimNextText = right!.trim;
    pos += right!.length;
  }
  tokens.push({ type: 'eof', value: '', pos: source.length });
  return tokens;
}

/** `}}` or ` -}}` (a trim marker needs the space before it) at `pos`. */
function rightDelimiter(source: string, pos: number): { length: number; trim: boolean } | undefined {
  if (isSpace(source[pos]) && source.startsWith('-}}', pos + 1)) return { length: 4, trim: true };
  if (source.startsWith('}}', pos)) return { length: 2, trim: false };
  return undefined;
}

/** Lexes one action's body from `pos` up to its right delimiter; returns the delimiter's position. */
function lexAction(source: string, start: number, tokens: Token[]): number {
  let pos = start;
  let parens = 0;
  for (;;) {
    if (pos >= source.length) throw new TemplateError('unclosed action', start);
    if (rightDelimiter(source, pos)) {
      if (parens === 0) return pos;
      throw new TemplateError('unclosed left paren', pos);
    }
    const c = source[pos]!;
    if (isSpace(c)) {
      // A run of spaces is one token; the last space before `-}}` belongs to the delimiter.
      tokens.push({ type: 'space', value: ' ', pos });
      while (isSpace(source[pos]) && !rightDelimiter(source, pos)) pos++;
      continue;
    }
    switch (c) {
      case '|':
        tokens.push({ type: 'pipe', value: c, pos });
        pos++;
        continue;
      case '(':
        parens++;
        tokens.push({ type: 'leftParen', value: c, pos });
        pos++;
        continue;
      case ')':
        parens--;
        if (parens < 0) throw new TemplateError('unexpected right paren', pos);
        tokens.push({ type: 'rightParen', value: c, pos });
        pos++;
        continue;
      case ',':
        tokens.push({ type: 'comma', value: c, pos });
        pos++;
        continue;
      case '=':
        tokens.push({ type: 'assign', value: c, pos });
        pos++;
        continue;
      case ':':
        if (source[pos + 1] !== '=') throw new TemplateError('expected :=', pos);
        tokens.push({ type: 'declare', value: ':=', pos });
        pos += 2;
        continue;
      case '"':
        pos = lexQuoted(source, pos, tokens);
        continue;
      case '`': {
        const close = source.indexOf('`', pos + 1);
        if (close < 0) throw new TemplateError('unterminated raw quoted string', pos);
        // Carriage returns inside raw strings are discarded, as in Go source.
        tokens.push({ type: 'string', value: source.slice(pos + 1, close).replace(/\r/g, ''), pos });
        pos = close + 1;
        continue;
      }
      case "'":
        pos = lexChar(source, pos, tokens);
        continue;
      case '$': {
        let end = pos + 1;
        while (isAlnum(source[end])) end++;
        tokens.push({ type: 'variable', value: source.slice(pos, end), pos });
        pos = end;
        checkTerminator(source, pos);
        continue;
      }
      case '.': {
        if (isDigit(source[pos + 1])) {
          pos = lexNumber(source, pos, tokens);
          continue;
        }
        let end = pos + 1;
        while (isAlnum(source[end])) end++;
        if (end === pos + 1) {
          tokens.push({ type: 'dot', value: '.', pos });
        } else {
          tokens.push({ type: 'field', value: source.slice(pos + 1, end), pos });
          checkTerminator(source, end);
        }
        pos = end;
        continue;
      }
    }
    if (c === '+' || c === '-' || isDigit(c)) {
      pos = lexNumber(source, pos, tokens);
      continue;
    }
    if (isAlnum(c)) {
      let end = pos;
      while (isAlnum(source[end])) end++;
      const word = source.slice(pos, end);
      const type: TokenType = KEYWORDS.has(word)
        ? 'keyword'
        : word === 'true' || word === 'false'
          ? 'bool'
          : word === 'nil'
            ? 'nil'
            : 'identifier';
      tokens.push({ type, value: word, pos });
      pos = end;
      checkTerminator(source, pos);
      continue;
    }
    throw new TemplateError(`unrecognized character in action: ${JSON.stringify(c)}`, pos);
  }
}

function checkTerminator(source: string, pos: number): void {
  if (!isTerminator(source[pos]) && !source.startsWith('}}', pos)) {
    throw new TemplateError(`bad character ${JSON.stringify(source[pos])}`, pos);
  }
}

/** Go's number syntax: sign, base prefixes, underscores, fraction, exponent. Validated by the parser. */
function lexNumber(source: string, start: number, tokens: Token[]): number {
  let pos = start;
  if (source[pos] === '+' || source[pos] === '-') pos++;
  while (pos < source.length && /[0-9a-zA-Z_.]/.test(source[pos]!)) {
    // An exponent sign belongs to the number: 1e-3, 0x1p+2.
    if (/[eEpP]/.test(source[pos]!) && (source[pos + 1] === '+' || source[pos + 1] === '-')) pos++;
    pos++;
  }
  const text = source.slice(start, pos);
  if (text === '+' || text === '-')
    throw new TemplateError(`bad number syntax: ${JSON.stringify(text)}`, start);
  tokens.push({ type: 'number', value: text, pos: start });
  if (!isTerminator(source[pos]) && !source.startsWith('}}', pos)) {
    throw new TemplateError(`bad number syntax: ${JSON.stringify(text + (source[pos] ?? ''))}`, start);
  }
  return pos;
}

const SIMPLE_ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  '\\': 92,
};

/**
 * Reads one escape sequence at `pos` (after the backslash) into `out` as UTF-8 bytes; returns
 * the position after it. `quote` is the literal's own quote character, the one extra escape allowed.
 */
function readEscape(source: string, pos: number, quote: string, out: number[], at: number): number {
  const c = source[pos];
  if (c === undefined) throw new TemplateError('unterminated quoted string', at);
  if (c in SIMPLE_ESCAPES) {
    out.push(SIMPLE_ESCAPES[c]!);
    return pos + 1;
  }
  if (c === quote) {
    out.push(c.charCodeAt(0));
    return pos + 1;
  }
  const hex = (count: number): number => {
    const digits = source.slice(pos + 1, pos + 1 + count);
    if (!new RegExp(`^[0-9a-fA-F]{${count}}$`).test(digits))
      throw new TemplateError('invalid escape sequence', pos - 1);
    return Number.parseInt(digits, 16);
  };
  if (c === 'x') {
    out.push(hex(2)); // a raw byte
    return pos + 3;
  }
  if (c >= '0' && c <= '7') {
    const digits = source.slice(pos, pos + 3);
    if (!/^[0-7]{3}$/.test(digits) || Number.parseInt(digits, 8) > 255) {
      throw new TemplateError('invalid escape sequence', pos - 1);
    }
    out.push(Number.parseInt(digits, 8));
    return pos + 3;
  }
  if (c === 'u' || c === 'U') {
    const count = c === 'u' ? 4 : 8;
    const code = hex(count);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      throw new TemplateError('invalid escape sequence', pos - 1);
    out.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
    return pos + 1 + count;
  }
  throw new TemplateError('unknown escape sequence', pos - 1);
}

/** An interpreted string literal; byte escapes may build UTF-8 sequences (`"\xc3\xa9"` is é). */
function lexQuoted(source: string, start: number, tokens: Token[]): number {
  const bytes: number[] = [];
  let pos = start + 1;
  for (;;) {
    const c = source[pos];
    if (c === undefined || c === '\n') throw new TemplateError('unterminated quoted string', start);
    if (c === '"') break;
    if (c === '\\') {
      pos = readEscape(source, pos + 1, '"', bytes, start);
      continue;
    }
    const cp = source.codePointAt(pos)!;
    const ch = String.fromCodePoint(cp);
    bytes.push(...Buffer.from(ch, 'utf8'));
    pos += ch.length;
  }
  tokens.push({ type: 'string', value: Buffer.from(bytes).toString('utf8'), pos: start });
  return pos + 1;
}

/** A character constant such as `'a'` or `'\n'`: its value is a number (the code point). */
function lexChar(source: string, start: number, tokens: Token[]): number {
  let pos = start + 1;
  let code: number;
  if (source[pos] === '\\') {
    const bytes: number[] = [];
    pos = readEscape(source, pos + 1, "'", bytes, start);
    const decoded = Buffer.from(bytes).toString('utf8');
    code = bytes.length === 1 ? bytes[0]! : decoded.codePointAt(0)!;
  } else {
    const cp = source.codePointAt(pos);
    if (cp === undefined || source[pos] === "'" || source[pos] === '\n') {
      throw new TemplateError('malformed character constant', start);
    }
    code = cp;
    pos += String.fromCodePoint(cp).length;
  }
  if (source[pos] !== "'") throw new TemplateError('malformed character constant', start);
  tokens.push({ type: 'char', value: String(code), pos: start });
  return pos + 1;
}
