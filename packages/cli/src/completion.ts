import { UsageError } from './exit-codes.js';

/** What completion knows: groups with their commands and flags, and commands without a group. */
export interface CompletionTree {
  groups: Map<string, Map<string, string[]>>;
  /** `certificate`, `sign`: a command and its flags, no subcommands. */
  commands: Map<string, string[]>;
  globalFlags: string[];
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** Shell completion scripts built from the command tree. */
export function completionScript(shell: string, tree: CompletionTree): string {
  if (shell === 'bash') return bash(tree);
  if (shell === 'zsh')
    return `# certwright zsh completion: eval "$(certwright completion zsh)"\nautoload -U +X bashcompinit && bashcompinit\n${bash(tree)}`;
  if (shell === 'fish') return fish(tree);
  throw new UsageError(`completion: unknown shell ${JSON.stringify(shell)} (${SHELLS.join(', ')})`);
}

const sorted = (keys: Iterable<string>) => [...keys].sort();

function bash({ groups, commands, globalFlags }: CompletionTree): string {
  const groupCases = sorted(groups.keys())
    .map((group) => {
      const entries = groups.get(group) as Map<string, string[]>;
      const flagCases = sorted(entries.keys())
        .map((c) => `        ${c}) flags="${[...(entries.get(c) ?? []), ...globalFlags].join(' ')}" ;;`)
        .join('\n');
      return `    ${group})\n      if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "${sorted(entries.keys()).join(' ')}" -- "$cur")); return; fi\n      case "\${COMP_WORDS[2]}" in\n${flagCases}\n      esac ;;`;
    })
    .join('\n');
  const commandCases = sorted(commands.keys())
    .map((c) => `    ${c}) flags="${[...(commands.get(c) ?? []), ...globalFlags].join(' ')}" ;;`)
    .join('\n');
  const first = [...sorted(groups.keys()), ...sorted(commands.keys()), 'completion', 'help'];
  return `# certwright bash completion: eval "$(certwright completion bash)"
_certwright() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${first.join(' ')}" -- "$cur")); return
  fi
  case "\${COMP_WORDS[1]}" in
${groupCases}
${commandCases}
    completion) COMPREPLY=($(compgen -W "${SHELLS.join(' ')}" -- "$cur")); return ;;
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
}
complete -F _certwright certwright
`;
}

/** Fish: `complete` lines conditioned on the words already typed. */
function fish({ groups, commands, globalFlags }: CompletionTree): string {
  const q = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const long = (flag: string) => flag.replace(/^--/, '');
  const lines = [
    '# certwright fish completion: certwright completion fish > ~/.config/fish/completions/certwright.fish',
    'complete -c certwright -f',
    `set -l __certwright_first ${[...sorted(groups.keys()), ...sorted(commands.keys()), 'completion', 'help'].join(' ')}`,
    `complete -c certwright -n "not __fish_seen_subcommand_from $__certwright_first" -a "$__certwright_first"`,
    `complete -c certwright -n "__fish_seen_subcommand_from completion" -a ${q(SHELLS.join(' '))}`,
  ];
  for (const flag of globalFlags) lines.push(`complete -c certwright -l ${long(flag)}`);
  for (const group of sorted(groups.keys())) {
    const entries = groups.get(group) as Map<string, string[]>;
    const names = sorted(entries.keys());
    lines.push(
      `complete -c certwright -n "__fish_seen_subcommand_from ${group}; and not __fish_seen_subcommand_from ${names.join(' ')}" -a ${q(names.join(' '))}`,
    );
    for (const name of names) {
      for (const flag of entries.get(name) ?? []) {
        lines.push(
          `complete -c certwright -n "__fish_seen_subcommand_from ${group}; and __fish_seen_subcommand_from ${name}" -l ${long(flag)}`,
        );
      }
    }
  }
  for (const name of sorted(commands.keys())) {
    lines.push(`complete -c certwright -n "__fish_seen_subcommand_from ${name}" -F`);
    for (const flag of commands.get(name) ?? []) {
      lines.push(`complete -c certwright -n "__fish_seen_subcommand_from ${name}" -l ${long(flag)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
