import { UsageError } from './exit-codes.js';

/** Shell completion scripts built from the command tree: groups, their commands, and their flags. */
export function completionScript(
  shell: string,
  tree: Map<string, Map<string, string[]>>,
  globalFlags: string[],
): string {
  const groups = [...tree.keys()].sort();
  const cases = groups
    .map((group) => {
      const commands = [...(tree.get(group)?.keys() ?? [])].sort();
      const flagCases = commands
        .map(
          (c) => `        ${c}) flags="${[...(tree.get(group)?.get(c) ?? []), ...globalFlags].join(' ')}" ;;`,
        )
        .join('\n');
      return `    ${group})\n      if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W "${commands.join(' ')}" -- "$cur")); return; fi\n      case "\${COMP_WORDS[2]}" in\n${flagCases}\n      esac ;;`;
    })
    .join('\n');
  const bash = `# certwright bash completion: eval "$(certwright completion bash)"
_certwright() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${[...groups, 'completion', 'help'].join(' ')}" -- "$cur")); return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur")); return ;;
  esac
  COMPREPLY=($(compgen -W "$flags" -- "$cur"))
}
complete -F _certwright certwright
`;
  if (shell === 'bash') return bash;
  if (shell === 'zsh')
    return `# certwright zsh completion: eval "$(certwright completion zsh)"\nautoload -U +X bashcompinit && bashcompinit\n${bash}`;
  throw new UsageError(`completion: unknown shell ${JSON.stringify(shell)} (bash or zsh)`);
}
