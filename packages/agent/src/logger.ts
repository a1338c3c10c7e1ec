/** The logger the agent writes to; pino and most structured loggers fit it. */
export interface AgentLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** One JSON object per line, for journald and log shippers. */
export function jsonLogger(write: (line: string) => void = (l) => process.stdout.write(l)): AgentLogger {
  const log = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  return { info: log('info'), warn: log('warn'), error: log('error') };
}

export const silentAgentLogger: AgentLogger = { info() {}, warn() {}, error() {} };
