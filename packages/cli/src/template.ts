import { UsageError } from './exit-codes.js';

/**
 * `-o jsonpath=…` (kubectl's JSONPath: `{.data[*].name}`, `{range .data[*]}{.id}{"\n"}{end}`)
 * and `-o template=…` (Go template style: `{{range .data}}{{.id}} {{.name}}{{"\n"}}{{end}}`):
 * one small language, two delimiters. Paths are `.field`, `['field']`, `[n]` and `[*]` from the
 * value in scope; text outside the braces is printed as written.
 */

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'path'; path: Step[] }
  | { kind: 'range'; path: Step[]; body: Node[] };

type Step = { field: string } | { index: number } | { all: true };

const MAX_TEMPLATE = 4096;

export type TemplateSyntax = 'jsonpath' | 'template';

export function compileTemplate(source: string, syntax: TemplateSyntax): (value: unknown) => string {
  const flag = syntax === 'jsonpath' ? '-o jsonpath' : '-o template';
  if (source.length > MAX_TEMPLATE) throw new UsageError(`${flag}: longer than ${MAX_TEMPLATE} characters`);
  const [open, close] = syntax === 'jsonpath' ? ['{', '}'] : ['{{', '}}'];
  const stack: Node[][] = [[]];
  let at = 0;
  while (at < source.length) {
    const start = source.indexOf(open, at);
    const current = stack[stack.length - 1] as Node[];
    if (start < 0) {
      current.push({ kind: 'text', text: source.slice(at) });
      break;
    }
    if (start > at) current.push({ kind: 'text', text: source.slice(at, start) });
    const end = findClose(source, start + open.length, close);
    if (end < 0) throw new UsageError(`${flag}: ${open} at character ${start + 1} is never closed`);
    const inner = source.slice(start + open.length, end).trim();
    at = end + close.length;
    if (inner === 'end') {
      if (stack.length === 1) throw new UsageError(`${flag}: {end} without {range}`);
      stack.pop();
    } else if (inner.startsWith('range ')) {
      const body: Node[] = [];
      current.push({ kind: 'range', path: parsePath(flag, inner.slice(6).trim()), body });
      stack.push(body);
    } else if (inner.startsWith('"')) {
      current.push({ kind: 'text', text: parseLiteral(flag, inner) });
    } else {
      current.push({ kind: 'path', path: parsePath(flag, inner) });
    }
  }
  if (stack.length > 1) throw new UsageError(`${flag}: {range} without {end}`);
  const root = stack[0] as Node[];
  return (value) => render(root, value);
}

/** The closing delimiter, skipping over a quoted literal that may contain it. */
function findClose(source: string, from: number, close: string): number {
  let quoted = false;
  for (let i = from; i < source.length; i++) {
    const c = source[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && source.startsWith(close, i)) return i;
  }
  return -1;
}

function parseLiteral(flag: string, text: string): string {
  try {
    const value = JSON.parse(text);
    if (typeof value === 'string') return value;
  } catch {
    // reported below
  }
  throw new UsageError(`${flag}: ${text} is not a quoted string`);
}

function parsePath(flag: string, text: string): Step[] {
  let rest = text.replace(/^[$@]/, '');
  if (rest === '' || rest === '.') return [];
  const steps: Step[] = [];
  while (rest.length > 0) {
    const match =
      /^\.([A-Za-z_][\w-]*)/.exec(rest) ??
      /^\[(\d{1,9})\]/.exec(rest) ??
      /^\[\*\]/.exec(rest) ??
      /^\.\*/.exec(rest) ??
      /^\['([^']*)'\]/.exec(rest);
    if (!match)
      throw new UsageError(
        `${flag}: cannot read the path ${JSON.stringify(text)} at ${JSON.stringify(rest)}`,
      );
    const [whole, capture] = match;
    if (whole === '[*]' || whole === '.*') steps.push({ all: true });
    else if (whole.startsWith('[') && /^\d/.test(capture ?? '')) steps.push({ index: Number(capture) });
    else steps.push({ field: capture as string });
    rest = rest.slice(whole.length);
  }
  return steps;
}

/** Every value a path reaches; `[*]` fans out over arrays and object values. */
function select(value: unknown, path: Step[]): unknown[] {
  let current: unknown[] = [value];
  for (const step of path) {
    const next: unknown[] = [];
    for (const v of current) {
      if (v === null || typeof v !== 'object') continue;
      if ('all' in step) next.push(...(Array.isArray(v) ? v : Object.values(v)));
      else if ('index' in step) {
        if (Array.isArray(v) && step.index < v.length) next.push(v[step.index]);
      } else if (!Array.isArray(v) && Object.hasOwn(v, step.field)) {
        next.push((v as Record<string, unknown>)[step.field]);
      }
    }
    current = next;
  }
  return current;
}

const scalar = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

function render(nodes: Node[], scope: unknown): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text;
    else if (node.kind === 'path') out += select(scope, node.path).map(scalar).join(' ');
    else {
      for (const found of select(scope, node.path)) {
        const items = Array.isArray(found) ? found : [found];
        for (const item of items) out += render(node.body, item);
      }
    }
  }
  return out;
}
