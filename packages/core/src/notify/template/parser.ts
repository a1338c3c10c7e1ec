import { TemplateError } from './errors.js';
import { FUNCTION_NAMES } from './functions.js';
import { lex, type Token, type TokenType } from './lexer.js';

/** The parse tree of the supported text/template subset. */
export type Node = TextNode | ActionNode | IfNode | RangeNode | BreakNode;

export interface TextNode {
  type: 'text';
  pos: number;
  text: string;
}

export interface ActionNode {
  type: 'action';
  pos: number;
  pipe: Pipe;
}

/** `if` and `with`: `else if` / `else with` chains nest in `elseList`. */
export interface IfNode {
  type: 'if' | 'with';
  pos: number;
  pipe: Pipe;
  list: Node[];
  elseList: Node[] | null;
}

export interface RangeNode {
  type: 'range';
  pos: number;
  pipe: Pipe;
  list: Node[];
  elseList: Node[] | null;
}

export interface BreakNode {
  type: 'break' | 'continue';
  pos: number;
}

export interface Pipe {
  pos: number;
  /** Variables declared (`:=`) or assigned (`=`) with the pipeline's value. */
  decl: string[];
  isAssign: boolean;
  cmds: Command[];
}

export interface Command {
  pos: number;
  args: Arg[];
}

export type Arg =
  | { type: 'field'; pos: number; names: string[] }
  | { type: 'variable'; pos: number; name: string; names: string[] }
  | { type: 'chain'; pos: number; node: Arg; names: string[] }
  | { type: 'pipe'; pos: number; pipe: Pipe }
  | { type: 'identifier'; pos: number; name: string }
  | { type: 'dot'; pos: number }
  | { type: 'nil'; pos: number }
  | { type: 'bool'; pos: number; value: boolean }
  | { type: 'number'; pos: number; value: number }
  | { type: 'string'; pos: number; value: string };

export interface ParseLimits {
  /** Control structures and parentheses nested deeper than this are refused. */
  maxDepth: number;
}

/** Parses a template; throws {@link TemplateError} at the offending position. */
export function parse(source: string, limits: ParseLimits): Node[] {
  return new Parser(lex(source), limits).parseTemplate();
}

type Ending = 'end' | 'else';

class Parser {
  private index = 0;
  private depth = 0;
  /** Declared variable names, innermost last; `$` is always declared. */
  private vars: string[] = ['$'];
  private rangeDepth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly limits: ParseLimits,
  ) {}

  parseTemplate(): Node[] {
    const { list, ending } = this.parseList();
    if (ending) throw new TemplateError(`unexpected {{${ending.word}}}`, ending.pos);
    return list;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    return this.tokens[this.index++]!;
  }

  private peekNonSpace(): Token {
    while (this.peek().type === 'space') this.index++;
    return this.peek();
  }

  private nextNonSpace(): Token {
    this.peekNonSpace();
    return this.next();
  }

  private expect(type: TokenType, context: string): Token {
    const token = this.nextNonSpace();
    if (token.type !== type) throw this.unexpected(token, context);
    return token;
  }

  private unexpected(token: Token, context: string): TemplateError {
    const what = token.type === 'eof' ? 'EOF' : token.type === 'right' ? '"}}"' : JSON.stringify(token.value);
    return new TemplateError(`unexpected ${what} in ${context}`, token.pos);
  }

  private enter(pos: number): void {
    if (++this.depth > this.limits.maxDepth) {
      throw new TemplateError(`nesting deeper than ${this.limits.maxDepth}`, pos, 'depth');
    }
  }

  /**
   * Nodes up to EOF or up to an `{{end}}` / `{{else …}}` action, which is returned (with the
   * tokens after `else` left unread) for the enclosing control structure to handle.
   */
  private parseList(): { list: Node[]; ending?: { word: Ending; pos: number } } {
    const list: Node[] = [];
    for (;;) {
      const token = this.next();
      if (token.type === 'eof') return { list };
      if (token.type === 'text') {
        list.push({ type: 'text', pos: token.pos, text: token.value });
        continue;
      }
      // token.type === 'left'
      const word = this.peekNonSpace();
      if (word.type === 'keyword') {
        switch (word.value) {
          case 'end':
            this.next();
            this.expect('right', 'end');
            return { list, ending: { word: 'end', pos: word.pos } };
          case 'else':
            this.next();
            return { list, ending: { word: 'else', pos: word.pos } };
          case 'if':
          case 'with':
          case 'range':
            this.next();
            list.push(this.parseControl(word.value, word.pos));
            continue;
          case 'break':
          case 'continue':
            this.next();
            if (this.rangeDepth === 0)
              throw new TemplateError(`{{${word.value}}} outside {{range}}`, word.pos);
            this.expect('right', word.value);
            list.push({ type: word.value, pos: word.pos });
            continue;
          default:
            throw new TemplateError(`{{${word.value}}} is not supported`, word.pos);
        }
      }
      const pipe = this.parsePipeline('command', 'right', false);
      list.push({ type: 'action', pos: token.pos, pipe });
    }
  }

  /** `if`, `with`, `range`: pipeline, list, optional else (chained for `else if` / `else with`). */
  private parseControl(kind: 'if' | 'with' | 'range', pos: number): IfNode | RangeNode {
    this.enter(pos);
    const mark = this.vars.length;
    const pipe = this.parsePipeline(kind, 'right', kind === 'range');
    if (kind === 'range') this.rangeDepth++;
    const body = this.parseList();
    if (kind === 'range') this.rangeDepth--;
    if (!body.ending) throw new TemplateError(`unexpected EOF: {{${kind}}} has no {{end}}`, pos);
    let elseList: Node[] | null = null;
    if (body.ending.word === 'else') {
      const after = this.peekNonSpace();
      if (after.type === 'keyword' && after.value === kind && kind !== 'range') {
        // `{{else if …}}` is `{{else}}{{if …}}…{{end}}{{end}}` with one shared {{end}}.
        this.next();
        elseList = [this.parseControl(kind, after.pos)];
      } else {
        this.expect('right', 'else');
        const rest = this.parseList();
        if (rest.ending?.word !== 'end') {
          throw new TemplateError(
            rest.ending ? 'expected {{end}}, found {{else}}' : `unexpected EOF: {{${kind}}} has no {{end}}`,
            rest.ending?.pos ?? pos,
          );
        }
        elseList = rest.list;
      }
    }
    this.vars.length = mark;
    this.depth--;
    if (kind === 'range') return { type: 'range', pos, pipe, list: body.list, elseList };
    return { type: kind, pos, pipe, list: body.list, elseList };
  }

  /** A pipeline up to `end` (`}}` or `)`), with an optional declaration or assignment in front. */
  private parsePipeline(context: string, end: 'right' | 'rightParen', allowTwoVars: boolean): Pipe {
    const start = this.peekNonSpace();
    const pipe: Pipe = { pos: start.pos, decl: [], isAssign: false, cmds: [] };
    this.parseDeclaration(pipe, context, allowTwoVars);
    for (;;) {
      const token = this.peekNonSpace();
      if (token.type === end) {
        this.next();
        break;
      }
      if (token.type === 'right' || token.type === 'rightParen' || token.type === 'eof') {
        throw this.unexpected(token, context);
      }
      pipe.cmds.push(this.parseCommand(context));
      const after = this.peekNonSpace();
      if (after.type === 'pipe') {
        this.next();
        const following = this.peekNonSpace();
        if (following.type === end || following.type === 'pipe')
          throw new TemplateError('missing command after |', following.pos);
      }
    }
    if (pipe.cmds.length === 0) throw new TemplateError(`missing value for ${context}`, start.pos);
    pipe.cmds.forEach((cmd, i) => {
      const first = cmd.args[0]!;
      if (i > 0 && ['bool', 'dot', 'nil', 'number', 'string'].includes(first.type)) {
        throw new TemplateError(`non executable command in pipeline stage ${i + 1}`, first.pos);
      }
    });
    // New variables are visible from here to the end of the enclosing control structure.
    if (!pipe.isAssign) this.vars.push(...pipe.decl);
    return pipe;
  }

  /** `$x :=`, `$x =`, and in `range` `$i, $e :=`; otherwise leaves the tokens unread. */
  private parseDeclaration(pipe: Pipe, context: string, allowTwoVars: boolean): void {
    const save = this.index;
    const first = this.peekNonSpace();
    if (first.type !== 'variable') return;
    this.next();
    const op = this.peekNonSpace();
    if (op.type === 'declare' || op.type === 'assign') {
      this.next();
      pipe.decl.push(first.value);
      pipe.isAssign = op.type === 'assign';
      if (pipe.isAssign && !this.vars.includes(first.value)) {
        throw new TemplateError(`undefined variable "${first.value}"`, first.pos);
      }
      return;
    }
    if (op.type === 'comma' && allowTwoVars) {
      this.next();
      const second = this.expect('variable', context);
      const declare = this.nextNonSpace();
      if (declare.type !== 'declare' && declare.type !== 'assign') throw this.unexpected(declare, context);
      pipe.decl.push(first.value, second.value);
      pipe.isAssign = declare.type === 'assign';
      if (pipe.isAssign) {
        for (const v of [first, second]) {
          if (!this.vars.includes(v.value)) throw new TemplateError(`undefined variable "${v.value}"`, v.pos);
        }
      }
      return;
    }
    if (op.type === 'comma') throw new TemplateError(`too many declarations in ${context}`, op.pos);
    this.index = save; // a variable used as a value
  }

  /** Operands up to `|`, `)` or `}}`. */
  private parseCommand(context: string): Command {
    const start = this.peekNonSpace();
    const cmd: Command = { pos: start.pos, args: [] };
    for (;;) {
      const token = this.peekNonSpace();
      if (token.type === 'pipe' || token.type === 'right' || token.type === 'rightParen') break;
      if (token.type === 'eof') throw this.unexpected(token, context);
      cmd.args.push(this.parseOperand(context));
      const after = this.peek();
      if (
        after.type !== 'space' &&
        after.type !== 'pipe' &&
        after.type !== 'right' &&
        after.type !== 'rightParen'
      ) {
        throw this.unexpected(after, 'operand');
      }
    }
    if (cmd.args.length === 0) throw new TemplateError('empty command', start.pos);
    return cmd;
  }

  /** A term, then a field chain when one follows without a space. */
  private parseOperand(context: string): Arg {
    const term = this.parseTerm(context);
    if (this.peek().type !== 'field') return term;
    const names: string[] = [];
    while (this.peek().type === 'field') names.push(this.next().value);
    switch (term.type) {
      case 'field':
        return { ...term, names: [...term.names, ...names] };
      case 'variable':
        return { ...term, names: [...term.names, ...names] };
      case 'pipe':
      case 'chain':
        return { type: 'chain', pos: term.pos, node: term, names };
      default:
        throw new TemplateError(`unexpected . after term ${JSON.stringify(this.describe(term))}`, term.pos);
    }
  }

  private describe(arg: Arg): string {
    switch (arg.type) {
      case 'identifier':
        return arg.name;
      case 'string':
        return JSON.stringify(arg.value);
      case 'number':
        return String(arg.value);
      case 'bool':
        return String(arg.value);
      default:
        return arg.type;
    }
  }

  private parseTerm(context: string): Arg {
    const token = this.nextNonSpace();
    switch (token.type) {
      case 'identifier':
        if (!FUNCTION_NAMES.has(token.value)) {
          throw new TemplateError(`function "${token.value}" not defined`, token.pos);
        }
        return { type: 'identifier', pos: token.pos, name: token.value };
      case 'dot':
        return { type: 'dot', pos: token.pos };
      case 'nil':
        return { type: 'nil', pos: token.pos };
      case 'bool':
        return { type: 'bool', pos: token.pos, value: token.value === 'true' };
      case 'variable':
        if (!this.vars.includes(token.value)) {
          throw new TemplateError(`undefined variable "${token.value}"`, token.pos);
        }
        return { type: 'variable', pos: token.pos, name: token.value, names: [] };
      case 'field':
        return { type: 'field', pos: token.pos, names: [token.value] };
      case 'string':
        return { type: 'string', pos: token.pos, value: token.value };
      case 'number':
        return { type: 'number', pos: token.pos, value: parseNumber(token.value, token.pos) };
      case 'char':
        return { type: 'number', pos: token.pos, value: Number(token.value) };
      case 'leftParen': {
        this.enter(token.pos);
        const pipe = this.parsePipeline('parenthesized pipeline', 'rightParen', false);
        this.depth--;
        return { type: 'pipe', pos: token.pos, pipe };
      }
      case 'keyword':
        throw new TemplateError(`unexpected keyword "${token.value}" in ${context}`, token.pos);
      default:
        throw this.unexpected(token, context);
    }
  }
}

/**
 * Go's integer and floating-point literal syntax: `0x`, `0o`, `0b` and leading-zero octal
 * integers, `_` between digits, decimal fractions and exponents. Hex floats and imaginary
 * numbers are refused.
 */
export function parseNumber(text: string, pos: number): number {
  const bad = () => new TemplateError(`bad number syntax: ${JSON.stringify(text)}`, pos);
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[+-]/, '');
  // Underscores only between digits, or between a base prefix and a digit.
  if (/(^_|_$|__|_\.|\._|_[eE]|[eE]_)/.test(body) || /^0_*[xob]_*$/i.test(body)) throw bad();
  const digits = body.replace(/_/g, '');
  let value: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(digits)) value = Number.parseInt(digits.slice(2), 16);
  else if (/^0[oO][0-7]+$/.test(digits)) value = Number.parseInt(digits.slice(2), 8);
  else if (/^0[bB][01]+$/.test(digits)) value = Number.parseInt(digits.slice(2), 2);
  else if (/^0[0-7]+$/.test(digits)) value = Number.parseInt(digits.slice(1), 8);
  else if (/^(0|[1-9][0-9]*)$/.test(digits)) value = Number(digits);
  else if (/^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(digits) && !/^0[0-9]+$/.test(digits)) {
    value = Number(digits);
  } else if (/i$/.test(digits) || /^0[xX].*[pP]/.test(digits)) {
    throw new TemplateError(`complex and hexadecimal floating-point numbers are not supported: ${text}`, pos);
  } else {
    throw bad();
  }
  if (!Number.isFinite(value)) throw bad();
  return sign * value;
}
