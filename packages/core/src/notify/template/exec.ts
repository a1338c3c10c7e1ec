import { TemplateError } from './errors.js';
import { FUNCTIONS } from './functions.js';
import type { ActionNode, Arg, Command, IfNode, Node, Pipe, RangeNode } from './parser.js';
import { formatValue, goType, isTrue, kindOf, MISSING, normalize, sortedKeys, type Value } from './values.js';

export interface ExecOptions {
  /** `error`: a key absent from a map fails; `no-value`: it prints `<no value>` (Go's default). */
  missingKey: 'error' | 'no-value';
  maxSteps: number;
  maxOutputBytes: number;
  /** Rewrites what an action prints; `written` is the output so far (URL templates). */
  actionFilter?: (action: ActionNode, text: string, written: string) => string;
}

/** No value passed along the pipe (the first command of a pipeline). */
const NONE: unique symbol = Symbol('none');
type Final = Value | typeof NONE;

type Signal = 'break' | 'continue' | undefined;

export function execute(nodes: Node[], data: Value, options: ExecOptions): string {
  return new Executor(options).run(nodes, data);
}

class Executor {
  private steps = 0;
  private readonly out: string[] = [];
  private bytes = 0;
  private readonly vars: { name: string; value: Value }[] = [];

  constructor(private readonly options: ExecOptions) {}

  run(nodes: Node[], data: Value): string {
    const root = normalize(data);
    this.vars.push({ name: '$', value: root });
    this.walkList(nodes, root);
    return this.out.join('');
  }

  private step(pos: number): void {
    if (++this.steps > this.options.maxSteps) {
      throw new TemplateError(`execution exceeds ${this.options.maxSteps} steps`, pos, 'steps');
    }
  }

  private write(text: string, pos: number): void {
    this.bytes += Buffer.byteLength(text, 'utf8');
    if (this.bytes > this.options.maxOutputBytes) {
      throw new TemplateError(`output exceeds ${this.options.maxOutputBytes} bytes`, pos, 'output');
    }
    this.out.push(text);
  }

  /** Strings built along the way are bounded like the output, so no loop can build a huge one. */
  private bounded<T extends Value>(value: T, pos: number): T {
    if (typeof value === 'string' && value.length > this.options.maxOutputBytes) {
      throw new TemplateError(`a value exceeds ${this.options.maxOutputBytes} bytes`, pos, 'output');
    }
    return value;
  }

  private walkList(nodes: Node[], dot: Value): Signal {
    for (const node of nodes) {
      const signal = this.walk(node, dot);
      if (signal) return signal;
    }
    return undefined;
  }

  private walk(node: Node, dot: Value): Signal {
    this.step(node.pos);
    switch (node.type) {
      case 'text':
        this.write(node.text, node.pos);
        return undefined;
      case 'action': {
        const value = this.evalPipeline(node.pipe, dot);
        if (node.pipe.decl.length === 0) {
          // Go unwraps a pipeline's interface value before printing it, so a nil result
          // prints "<no value>" (inside a slice or map it is still "<nil>").
          let text = value === null || value === undefined ? '<no value>' : formatValue(value);
          if (this.options.actionFilter) text = this.options.actionFilter(node, text, this.out.join(''));
          this.write(text, node.pos);
        }
        return undefined;
      }
      case 'if':
      case 'with':
        return this.walkIfOrWith(node, dot);
      case 'range':
        return this.walkRange(node, dot);
      case 'break':
      case 'continue':
        return node.type;
    }
  }

  private walkIfOrWith(node: IfNode, dot: Value): Signal {
    const mark = this.vars.length;
    try {
      const value = this.evalPipeline(node.pipe, dot);
      if (isTrue(value)) return this.walkList(node.list, node.type === 'with' ? value : dot);
      if (node.elseList) return this.walkList(node.elseList, dot);
      return undefined;
    } finally {
      this.vars.length = mark;
    }
  }

  private walkRange(node: RangeNode, dot: Value): Signal {
    const mark = this.vars.length;
    try {
      const value = this.evalCommands(node.pipe, dot);
      const decl = node.pipe.decl;
      // Declared range variables live for the whole range; each iteration sets them.
      if (!node.pipe.isAssign) for (const name of decl) this.vars.push({ name, value: null });
      const items = this.iterate(value, decl.length, node.pos);
      if (items.length === 0) return node.elseList ? this.walkList(node.elseList, dot) : undefined;
      const bodyMark = this.vars.length;
      for (const [key, element] of items) {
        this.step(node.pos);
        if (decl.length === 1) this.setVar(decl[0]!, element);
        if (decl.length === 2) {
          this.setVar(decl[0]!, key);
          this.setVar(decl[1]!, element);
        }
        const signal = this.walkList(node.list, element);
        this.vars.length = bodyMark;
        if (signal === 'break') break;
      }
      return undefined;
    } finally {
      this.vars.length = mark;
    }
  }

  /** Key/element pairs of a range: slices in order, maps by sorted key, integers 0 … n-1. */
  private iterate(value: Value, variables: number, pos: number): [Value, Value][] {
    switch (kindOf(value)) {
      case 'array':
        return (value as Value[]).map((e, i) => [i, normalize(e)]);
      case 'map': {
        const map = value as Record<string, Value>;
        return sortedKeys(map).map((k) => [k, normalize(map[k])]);
      }
      case 'int': {
        if (variables > 1)
          throw new TemplateError(`can't use ${value} to iterate over more than one variable`, pos);
        const n = Math.max(0, value as number);
        if (n > this.options.maxSteps) {
          throw new TemplateError(`execution exceeds ${this.options.maxSteps} steps`, pos, 'steps');
        }
        return Array.from({ length: n }, (_, i) => [i, i]);
      }
      case 'nil':
      case 'missing':
        return [];
      default:
        throw new TemplateError(`range can't iterate over ${formatValue(value)}`, pos);
    }
  }

  private setVar(name: string, value: Value): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    // The parser refuses undefined variables; this is a safety net.
    throw new TemplateError(`undefined variable: ${name}`, 0);
  }

  private getVar(name: string, pos: number): Value {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) return this.vars[i]!.value;
    }
    throw new TemplateError(`undefined variable: ${name}`, pos);
  }

  private evalCommands(pipe: Pipe, dot: Value): Value {
    let value: Final = NONE;
    for (const cmd of pipe.cmds) value = this.evalCommand(cmd, dot, value);
    return value as Value;
  }

  private evalPipeline(pipe: Pipe, dot: Value): Value {
    const value = this.evalCommands(pipe, dot);
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, value);
      else this.vars.push({ name, value });
    }
    return value;
  }

  private notAFunction(cmd: Command, final: Final, what: string): void {
    if (cmd.args.length > 1 || final !== NONE) {
      throw new TemplateError(`can't give argument to non-function ${what}`, cmd.args[0]!.pos);
    }
  }

  private evalCommand(cmd: Command, dot: Value, final: Final): Value {
    this.step(cmd.pos);
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'identifier':
        return this.call(first.name, cmd.args.slice(1), dot, final, first.pos);
      case 'field':
        if (cmd.args.length > 1 || final !== NONE) {
          throw new TemplateError(`${first.names.at(-1)} is not a method but has arguments`, first.pos);
        }
        return this.evalArg(first, dot);
      case 'nil':
        throw new TemplateError('nil is not a command', first.pos);
      default:
        this.notAFunction(cmd, final, describe(first));
        return this.evalArg(first, dot);
    }
  }

  private call(name: string, argNodes: Arg[], dot: Value, final: Final, pos: number): Value {
    if (name === 'and' || name === 'or') return this.andOr(name, argNodes, dot, final, pos);
    const args = argNodes.map((a) => this.evalArg(a, dot));
    if (final !== NONE) args.push(final);
    return this.bounded(FUNCTIONS[name]!(args, pos), pos);
  }

  /** `and` / `or` stop at the first argument that decides, as Go does since 1.18. */
  private andOr(name: 'and' | 'or', argNodes: Arg[], dot: Value, final: Final, pos: number): Value {
    const count = argNodes.length + (final === NONE ? 0 : 1);
    if (count === 0) throw new TemplateError(`wrong number of args for ${name}: want at least 1 got 0`, pos);
    let value: Value = null;
    for (let i = 0; i < count; i++) {
      value = i < argNodes.length ? this.evalArg(argNodes[i]!, dot) : final;
      if (isTrue(value) === (name === 'or')) return value;
    }
    return value;
  }

  private evalArg(arg: Arg, dot: Value): Value {
    this.step(arg.pos);
    switch (arg.type) {
      case 'dot':
        return dot;
      case 'nil':
        return null;
      case 'bool':
      case 'number':
      case 'string':
        return arg.value;
      case 'field':
        return this.fields(dot, arg.names, arg.pos);
      case 'variable':
        return this.fields(this.getVar(arg.name, arg.pos), arg.names, arg.pos);
      case 'chain':
        return this.fields(this.evalArg(arg.node, dot), arg.names, arg.pos);
      case 'pipe':
        // Variables declared inside parentheses stay in scope, as the parser sees them.
        return this.evalPipeline(arg.pipe, dot);
      case 'identifier':
        return this.call(arg.name, [], dot, NONE, arg.pos);
    }
  }

  /** `.A.B` on `receiver`: map keys, as Go reads `map[string]any`. */
  private fields(receiver: Value, names: string[], pos: number): Value {
    let value = receiver;
    for (const name of names) {
      this.step(pos);
      const kind = kindOf(value);
      if (kind === 'missing') {
        if (this.options.missingKey === 'error')
          throw new TemplateError(`nil data; no entry for key "${name}"`, pos);
        return MISSING;
      }
      if (kind === 'nil') throw new TemplateError(`nil pointer evaluating .${name}`, pos);
      if (kind !== 'map')
        throw new TemplateError(`can't evaluate field ${name} in type ${goType(value)}`, pos);
      const map = value as Record<string, Value>;
      const found = Object.hasOwn(map, name) ? map[name] : undefined;
      if (found === undefined) {
        if (this.options.missingKey === 'error')
          throw new TemplateError(`map has no entry for key "${name}"`, pos);
        value = MISSING;
      } else {
        value = normalize(found);
      }
    }
    return value;
  }
}

function describe(arg: Arg): string {
  switch (arg.type) {
    case 'string':
      return JSON.stringify(arg.value);
    case 'number':
    case 'bool':
      return String(arg.value);
    case 'dot':
      return '.';
    case 'variable':
      return [arg.name, ...arg.names].join('.');
    default:
      return arg.type;
  }
}
