/**
 * Completion scripts for `legion completion <shell>` (docs/cli-conventions.md#shell-completion).
 * Each asks `legion completion __complete -- <words…>` for the candidates of the word under the
 * cursor, so commands, flags, agent ids and run ids come from this build and this workspace;
 * with no candidate the shell falls back to file names.
 */
export function completionScript(shell: 'bash' | 'zsh' | 'fish'): string {
  switch (shell) {
    case 'bash':
      return `# legion completion for bash. Install:
#   legion completion bash > ~/.local/share/bash-completion/completions/legion
# or add to ~/.bashrc:  source <(legion completion bash)
_legion() {
  local IFS=$'\\n'
  COMPREPLY=($(command legion completion __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _legion legion
`;
    case 'zsh':
      return `#compdef legion
# legion completion for zsh. Install (a folder of your $fpath, before compinit runs):
#   legion completion zsh > "\${fpath[1]}/_legion"
# or add to ~/.zshrc after compinit:  source <(legion completion zsh)
_legion() {
  local -a candidates
  candidates=("\${(@f)$(command legion completion __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=(\${candidates:#})
  if (( \${#candidates} )); then compadd -- "\${candidates[@]}"; else _files; fi
}
if [[ "\${funcstack[1]}" == "_legion" ]]; then _legion "$@"; else compdef _legion legion; fi
`;
    case 'fish':
      return `# legion completion for fish. Install:
#   legion completion fish > ~/.config/fish/completions/legion.fish
complete -c legion -f -a '(command legion completion __complete -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`;
  }
}
