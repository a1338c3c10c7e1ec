#!/usr/bin/env node
/**
 * certwright-agent — runs the agent loop as a service.
 *
 *   certwright-agent [--config /etc/certwright-agent/agent.json]
 *   certwright-agent register --name web-01 [--config …]   (admin key in SVC_API_KEY or SVC_API_KEY_FILE)
 *   certwright-agent --help | --version                     (no configuration needed)
 *
 * Exit codes: 0 after SIGTERM/SIGINT or when the server retired the agent (410); 2 for a
 * configuration error at start-up; 1 for anything else.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { registerAgent } from './api.js';
import { AgentConfigError, requireHttpsUrl } from './config.js';
import { jsonLogger } from './logger.js';
import { readProgramConfig, startAgentProgram } from './program.js';
import { AGENT_VERSION } from './runner.js';

const logger = jsonLogger();

const USAGE = `Usage: certwright-agent [--config <file>]
       certwright-agent register [--name <name>] [--config <file>]
       certwright-agent --help | --version

Runs the certwright deployment agent as a service: heartbeats, claims its jobs, generates keys
on this host, deploys certificates to its targets. \`register\` registers this host once with an
administrator key and stores the agent's own key in SVC_AGENT_API_KEY_FILE.

Options:
  --config <file>  the agent's JSON configuration (env SVC_AGENT_CONFIG)
  --name <name>    register: the agent's name (default: the host name)
  -h, --help       print this help
  -V, --version    print the agent's version

Environment: SVC_SERVER_URL (https:// only), SVC_AGENT_ID, SVC_AGENT_API_KEY or
SVC_AGENT_API_KEY_FILE, SVC_SERVER_CA_BUNDLE_PATH; register also SVC_API_KEY or SVC_API_KEY_FILE.
Exit codes: 0 stopped (SIGTERM, SIGINT, or retired by the server), 2 configuration error, 1 other.
See docs/agent/README.md.
`;

/** The flags each form takes a value for; anything else is a usage error, reported before any start-up. */
const VALUE_FLAGS: Record<string, string[]> = { run: ['--config'], register: ['--config', '--name'] };

/** Help, version and a malformed command line answer without any configuration. */
function usageCheck(args: string[]): { exit: number; text: string; stream: 'stdout' | 'stderr' } | undefined {
  if (args.includes('--help') || args.includes('-h')) return { exit: 0, text: USAGE, stream: 'stdout' };
  if (args.includes('--version') || args.includes('-V'))
    return { exit: 0, text: `${AGENT_VERSION}\n`, stream: 'stdout' };
  const form = args[0] === 'register' ? 'register' : 'run';
  const rest = form === 'register' ? args.slice(1) : args;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if ((VALUE_FLAGS[form] as string[]).includes(arg)) {
      if (rest[i + 1] === undefined || rest[i + 1]?.startsWith('--'))
        return { exit: 2, text: `certwright-agent: ${arg} needs a value\n${USAGE}`, stream: 'stderr' };
      i++;
      continue;
    }
    return {
      exit: 2,
      text: `certwright-agent: unknown ${arg.startsWith('-') ? 'option' : 'command'} ${JSON.stringify(arg)}\n${USAGE}`,
      stream: 'stderr',
    };
  }
  return undefined;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function register(args: string[], configPath: string | undefined): Promise<void> {
  const config = readProgramConfig(configPath);
  const serverUrl = process.env.SVC_SERVER_URL ?? config.server_url;
  if (!serverUrl) throw new AgentConfigError('SVC_SERVER_URL is required');
  requireHttpsUrl(serverUrl);
  const adminKey =
    process.env.SVC_API_KEY ??
    (process.env.SVC_API_KEY_FILE ? readFileSync(process.env.SVC_API_KEY_FILE, 'utf8').trim() : undefined);
  if (!adminKey)
    throw new AgentConfigError('register needs an administrator key in SVC_API_KEY or SVC_API_KEY_FILE');
  const keyFile = process.env.SVC_AGENT_API_KEY_FILE ?? config.api_key_file;
  if (!keyFile)
    throw new AgentConfigError('register needs SVC_AGENT_API_KEY_FILE (or api_key_file) to store the key');
  const caPath = process.env.SVC_SERVER_CA_BUNDLE_PATH ?? config.ca_bundle_path;
  const { id } = await registerAgent(
    { serverUrl, ...(caPath ? { caBundlePem: readFileSync(caPath, 'utf8') } : {}) },
    adminKey,
    { name: option(args, '--name') ?? hostname(), hostname: hostname() },
    keyFile,
  );
  // The id is not secret; the key went to the file only.
  process.stdout.write(`${JSON.stringify({ agent_id: id, api_key_file: keyFile })}\n`);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const usage = usageCheck(args);
  if (usage) {
    process[usage.stream].write(usage.text);
    return usage.exit;
  }
  const configPath = option(args, '--config') ?? process.env.SVC_AGENT_CONFIG;
  if (args[0] === 'register') {
    await register(args, configPath);
    return 0;
  }
  const program = await startAgentProgram(process.env, configPath, logger);
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping after the job in hand');
    program.agent.stop();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  const reason = await program.done;
  logger.info({ reason }, 'certwright-agent stopped');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof AgentConfigError) {
      logger.error({ err: error.message }, 'certwright-agent cannot start');
      process.exitCode = 2;
      return;
    }
    logger.error({ err: (error as Error).message }, 'certwright-agent failed');
    process.exitCode = 1;
  },
);
