import type { Logger } from '@certwright/core';
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import { type RedactOptions, redactString, redactValue } from './redact.js';

/**
 * JSON logs on stdout (or `destination`). Every field, child binding and message passes
 * through the redaction of redact.ts: a second line of defence, since code never passes
 * secrets, keys or authorization headers as log fields in the first place.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  // Stacks of operational failures (a receiver down, a database refusing) only at debug.
  const redact: RedactOptions = { stacks: level === 'debug' || level === 'trace' ? 'all' : 'unexpected' };
  const options = {
    level,
    base: { service: 'certwright-server' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Errors are serialized (and redacted) by redactValue; pino's serializer would rename them.
    serializers: { err: (value: unknown) => value },
    formatters: {
      bindings: (bindings: Record<string, unknown>) =>
        redactValue(bindings, redact) as Record<string, unknown>,
      log: (fields: Record<string, unknown>) => redactValue(fields, redact) as Record<string, unknown>,
    },
    hooks: {
      logMethod(this: unknown, args: unknown[], method: (...args: unknown[]) => void) {
        method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? redactString(arg) : arg)),
        );
      },
    },
  };
  return port(destination ? pino(options, destination) : pino(options), redact);
}

/** The Logger port over pino. Child bindings are redacted here: pino formats only the root's. */
function port(instance: PinoLogger, redact: RedactOptions): Logger {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (fields: object, message?: string): void => {
      if (message === undefined) instance[level](fields);
      else instance[level](fields, message);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (bindings) =>
      port(instance.child(redactValue(bindings, redact) as Record<string, unknown>), redact),
  };
}
