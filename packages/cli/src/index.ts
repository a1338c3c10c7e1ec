export { EXIT, type ExitCode, exitCodeOf, UsageError } from './exit-codes.js';
export { type CommandName, commandNameOf, commandTable } from './naming.js';
export { buildProgram, type CliIo, runCli } from './program.js';
