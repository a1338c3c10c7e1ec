import type { Logger } from '@certwright/core';
import { pino } from 'pino';

/**
 * JSON logs on stdout. Redaction is a second line of defence: code never passes secrets,
 * keys or authorization headers as log fields in the first place.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'certwright-server' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        'password',
        '*.password',
        'secret',
        '*.secret',
        'privateKey',
        '*.privateKey',
      ],
      censor: '[redacted]',
    },
  }) as unknown as Logger;
}
