import { type CertwrightError, fail, isCertwrightError } from '../../errors.js';
import { TemplateError, templateFailure } from './errors.js';
import { type ExecOptions, execute } from './exec.js';
import { pathEscape } from './functions.js';
import { type ActionNode, type Node, parse } from './parser.js';

export interface TemplateLimits {
  /** Largest template text, in UTF-8 bytes. */
  maxTemplateBytes: number;
  /** Deepest nesting of `if`/`with`/`range` and parentheses. */
  maxDepth: number;
  /** Execution budget: every node, command, argument, field step and range iteration counts one. */
  maxSteps: number;
  /** Largest output, in UTF-8 bytes; every intermediate string is bounded by it too. */
  maxOutputBytes: number;
}

export const DEFAULT_TEMPLATE_LIMITS: Readonly<TemplateLimits> = Object.freeze({
  maxTemplateBytes: 64 * 1024,
  maxDepth: 50,
  maxSteps: 100_000,
  maxOutputBytes: 256 * 1024,
});

/** URL templates produce URLs: a smaller output bound. */
export const DEFAULT_URL_TEMPLATE_LIMITS: Readonly<TemplateLimits> = Object.freeze({
  ...DEFAULT_TEMPLATE_LIMITS,
  maxTemplateBytes: 8 * 1024,
  maxOutputBytes: 8 * 1024,
});

export interface TemplateOptions {
  /** Names the template in errors' `fields` (default `template`; `url` for URL templates). */
  field?: string;
  limits?: Partial<TemplateLimits>;
  /**
   * A field that is not in the data: `'error'` (default) fails naming the key, so a typo shows
   * at create and test time; `'no-value'` prints `<no value>` as Go does for maps.
   */
  missingKey?: 'error' | 'no-value';
}

/** A parsed template: parse once, render many times. */
export interface ParsedTemplate {
  readonly source: string;
  /** Renders with `data` (JSON-like values; `.Field` reads object keys). Throws `invalid_input`. */
  render(data: unknown): string;
}

function compile(
  source: string,
  options: TemplateOptions,
  defaults: Readonly<TemplateLimits>,
  defaultField: string,
  actionFilter?: ExecOptions['actionFilter'],
): ParsedTemplate {
  const limits = { ...defaults, ...options.limits };
  const field = options.field ?? defaultField;
  const typed = (error: unknown): CertwrightError => {
    if (error instanceof TemplateError) return templateFailure(source, error, field);
    if (isCertwrightError(error)) return error;
    return fail('internal', 'template engine failure', { cause: error });
  };
  if (typeof source !== 'string')
    throw fail('invalid_input', 'template: not a string', {
      fields: [{ field, message: 'must be a string' }],
    });
  if (Buffer.byteLength(source, 'utf8') > limits.maxTemplateBytes) {
    throw typed(new TemplateError(`larger than ${limits.maxTemplateBytes} bytes`, 0, 'template_size'));
  }
  let nodes: Node[];
  try {
    nodes = parse(source, { maxDepth: limits.maxDepth });
  } catch (error) {
    throw typed(error);
  }
  const exec: ExecOptions = {
    missingKey: options.missingKey ?? 'error',
    maxSteps: limits.maxSteps,
    maxOutputBytes: limits.maxOutputBytes,
    ...(actionFilter ? { actionFilter } : {}),
  };
  return Object.freeze({
    source,
    render(data: unknown): string {
      try {
        return execute(nodes, data, exec);
      } catch (error) {
        throw typed(error);
      }
    },
  });
}

/**
 * Parses a template in the Go `text/template` subset of docs/notifications/templates.md.
 * Errors are `CertwrightError`s with reason `invalid_input`, the line and column in the
 * message and in `extra`, and `fields: [{ field }]`.
 */
export function parseTemplate(source: string, options: TemplateOptions = {}): ParsedTemplate {
  return compile(source, options, DEFAULT_TEMPLATE_LIMITS, 'template');
}

/** Parses and renders once. */
export function renderTemplate(source: string, data: unknown, options: TemplateOptions = {}): string {
  return parseTemplate(source, options).render(data);
}

/** Where an action's output lands in the URL written so far. */
function urlPart(written: string): 'authority' | 'path' | 'query' {
  const origin = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(written);
  if (!origin) return 'authority';
  const rest = written.slice(origin[0].length);
  if (rest === '') return 'authority';
  return /[?#]/.test(rest) ? 'query' : 'path';
}

/** The function that ends an action's pipeline, if its last command is a call. */
function lastFunction(action: ActionNode): string | undefined {
  const first = action.pipe.cmds.at(-1)?.args[0];
  return first?.type === 'identifier' ? first.name : undefined;
}

function urlActionFilter(action: ActionNode, text: string, written: string): string {
  const part = urlPart(written);
  const last = lastFunction(action);
  if (part === 'authority') {
    throw new TemplateError(
      'a URL template must start with literal scheme and host (https://host/…); actions may fill the path and query only',
      action.pos,
    );
  }
  if (part === 'path') return last === 'urlpath' || last === 'urlquery' ? text : pathEscape(text);
  if (last !== 'urlquery') {
    throw new TemplateError(
      'a value in the query of a URL template must end with urlquery, e.g. {{.Message | urlquery}}',
      action.pos,
    );
  }
  return text;
}

/**
 * Parses a URL template. The scheme and host are literal text. An action printing before the
 * first literal `?` or `#` is in the path and is encoded as one path segment (`urlpath`) unless
 * its pipeline already ends with `urlpath` or `urlquery`; an action after it is in the query (or
 * fragment) and must end with `urlquery`, or rendering fails.
 */
export function parseUrlTemplate(source: string, options: TemplateOptions = {}): ParsedTemplate {
  return compile(source, options, DEFAULT_URL_TEMPLATE_LIMITS, 'url', urlActionFilter);
}

export function renderUrlTemplate(source: string, data: unknown, options: TemplateOptions = {}): string {
  return parseUrlTemplate(source, options).render(data);
}
