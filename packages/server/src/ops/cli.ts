import { runBackupCommand } from './backup-command.js';
import { type CommandIo, processIo } from './command.js';
import { runRekeyCommand } from './rekey-command.js';
import { runRestoreCommand } from './restore-command.js';

/** The operations commands of certwright-server, by their first argument. */
const COMMANDS: Record<string, (argv: readonly string[], io: CommandIo) => Promise<number>> = {
  backup: runBackupCommand,
  rekey: runRekeyCommand,
  restore: runRestoreCommand,
};

export const isOperationsCommand = (name: string | undefined): name is string =>
  name !== undefined && Object.hasOwn(COMMANDS, name);

/** Runs `certwright-server <command> …` and exits with its code once its output is written. */
export async function runOperationsCommand(
  name: string,
  argv: readonly string[],
  io = processIo(),
): Promise<void> {
  const command = COMMANDS[name];
  if (!command) throw new Error(`unknown command ${name}`);
  process.exitCode = await command(argv, io);
}
