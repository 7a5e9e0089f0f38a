import { evaluateRules, type RuleQuery } from './evaluate';
import type { RuleSet } from './rule-set';
import { parsePlain } from './shell-plain';
import { splitShell } from './shell-split';

/**
 * The parse of a shell command as `legion rules explain` shows it (docs/shell-rules.md#explain):
 * whether the line is plain words and, if not, which part and where; each simple command with
 * its words and what the rules say about it alone (so the part that made the line ask stands
 * out); for a line that is not plain, the parts deny and ask rules were checked against.
 */
export function explainShell(ruleSet: RuleSet, query: RuleQuery, command: string): string[] {
  const lines: string[] = [];
  const plain = parsePlain(command);
  if (!plain.plain) {
    lines.push(`parse:    not plain words: ${plain.why} at character ${plain.at + 1}`);
    lines.push(...pointAt(command, plain.at));
    lines.push('          no allow rule applies to it: it asks unless a deny rule matches');
    const split = splitShell(command);
    lines.push(`parts:    what deny and ask rules were checked against${split.ok ? '' : ` (split stopped: ${split.error})`}`);
    split.commands.forEach((part, i) => lines.push(`  ${i + 1}. ${part.text}`));
    return lines;
  }
  lines.push(`parse:    plain words, ${plain.commands.length} simple command${plain.commands.length === 1 ? '' : 's'}`);
  plain.commands.forEach((part, i) => {
    const alone = evaluateRules(ruleSet, { ...query, input: { command: part.argv.map(shellQuote).join(' ') } });
    const said = alone.decision === null ? `no rule decides: ${alone.reason}` : `${alone.decision} by ${alone.ruleId ?? 'no rule'}: ${alone.reason}`;
    const redirects = part.redirects.length > 0 ? `  redirects: ${part.redirects.join(' ')}` : '';
    lines.push(`  ${i + 1}. words: ${JSON.stringify(part.argv)}${redirects}`);
    lines.push(`     ${said}`);
  });
  return lines;
}

/** The line (first 100 characters around `at`) with a caret under character `at`. */
function pointAt(command: string, at: number): string[] {
  const from = Math.max(0, at - 60);
  const shown = command.slice(from, from + 100).replace(/[\n\t]/g, ' ');
  return [`          ${from > 0 ? '…' : ''}${shown}`, `          ${from > 0 ? ' ' : ''}${' '.repeat(at - from)}^`];
}

/** A word as shell source that parses back to exactly that word. */
function shellQuote(word: string): string {
  return /^[A-Za-z0-9_.\/:,=@%+^-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
