import { isCertwrightError, type Logger } from '@certwright/core';
import { parseConfig, type ServiceConfig } from '../config.js';
import { createLogger } from '../logger.js';

/** Where an operations command writes: lines of its report, and its progress and errors. */
export interface CommandIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
}

export const processIo = (): CommandIo => ({
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
});

/**
 * The server's configuration for a command that opens its database. TLS files are not needed to
 * back up or re-seal a database, so missing TLS variables are filled with placeholders that
 * nothing reads.
 */
export function commandConfig(io: CommandIo): Readonly<ServiceConfig> {
  return parseConfig({
    SVC_TLS_CERT_PATH: 'unused-by-commands',
    SVC_TLS_KEY_PATH: 'unused-by-commands',
    ...(io.env.SVC_AUTH_TYPE === undefined && io.env.SVC_AUTH_SECRET === undefined
      ? { SVC_AUTH_TYPE: 'none' }
      : {}),
    ...io.env,
  });
}

/** A logger for commands: warnings and errors only, as JSON lines on stderr (stdout is the report). */
export function commandLogger(config: Readonly<ServiceConfig>): Logger {
  const level = config.logLevel === 'info' ? 'warn' : config.logLevel;
  return createLogger(level, process.stderr);
}

export function messageOf(error: unknown): string {
  return isCertwrightError(error) ? error.message : error instanceof Error ? error.message : String(error);
}
