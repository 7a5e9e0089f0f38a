import { stat } from 'node:fs/promises';
import micromatch from 'micromatch';
import { z } from 'zod';
import type { Tool } from '../types';
import { clip, isInsideWorkspace, resolveWorkspacePath, rootOf } from '../path-safety';
import { createIgnoreFilter } from '../gitignore';
import { walkFiles, type WalkedFile } from '../walk';
import { globPatternProblem } from '../pattern-safety';
import { compileRegex, createRegexRunner, REGEX_BATCH_TIMEOUT_MS } from '../regex-runner';
import { isBinaryHandle, openCheckedForRead, openForRead, scanLines } from '../text-file';
import { locationOf } from '../fd-location';
import { errorResult, okResult, count } from '../result';
import { lazySchema } from '../../storage/lazy-schema';
import { secretPathMatcher } from '../sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../sandbox/secret-patterns';

/** Matching lines returned at most. */
export const GREP_MAX_MATCHES = 500;
/** Characters of a matching line shown. */
export const GREP_MAX_LINE_CHARS = 500;
/** Bytes of a line the pattern is tested against (longer lines are tested on their start). */
export const GREP_MAX_LINE_BYTES = 64 * 1024;
const BATCH_LINES = 4000;
const BATCH_BYTES = 512 * 1024;
const MAX_REGEX_LENGTH = 10_000;

const schema = lazySchema(() =>
  z.strictObject({
    pattern: z.string().describe('Regular expression (JavaScript syntax), tested against each line'),
    path: z.string().optional().describe('File or directory to search, relative to the workspace root. Default: the root'),
    glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" (matched on the file name) or "src/**/*.ts"'),
    ignoreCase: z.boolean().optional().describe('Case-insensitive match'),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

interface Pending {
  readonly file: string;
  readonly lineNo: number;
  readonly text: string;
}

export interface GrepToolOptions {
  readonly regexTimeoutMs?: number;
  /**
   * The rules' secret paths (workspace-relative; `secretPathMatcher(secretPatternsOf(ruleSet))`):
   * a file met while searching a folder is skipped when it is one, as `file_read` of it is denied
   * (`.env`, `*.pem`, `credentials.json`…): searching the workspace must not print what reading it
   * may not. Required: safety depends on it. A file named in `path` is the rules' to decide.
   */
  readonly secretPath: (workspaceRelative: string) => boolean;
}

/**
 * `grep`: a streaming regex search, line by line, printing `file:line: text`. Skips
 * binary files (NUL in the first 8 KiB), `.gitignore`d files, `.git`, `node_modules` and
 * `.legion`; an explicitly named file is searched even if ignored. Stops at
 * GREP_MAX_MATCHES or the output limit with a note. A pattern that backtracks
 * catastrophically is stopped by a watchdog and reported, never hangs the process.
 */
export function createGrepTool(options: GrepToolOptions): Tool<Input> {
  const regexTimeoutMs = options.regexTimeoutMs ?? REGEX_BATCH_TIMEOUT_MS;
  const { secretPath } = options;
  return {
    name: 'grep',
    description:
      'Search file contents with a regular expression (JavaScript syntax), line by line. Returns "file:line: text" for each ' +
      'matching line. Skips binary files, .git, node_modules and .gitignore\'d files. Narrow with path and glob.',
    get schema() {
      return schema();
    },
    pathFields: ['path'],
    readOnly: true,
    keyArgument: (input) => (input.path ? `${input.pattern} in ${input.path}` : input.pattern),
    async execute(input, context) {
      if (input.pattern.length === 0) return errorResult('pattern is empty');
      if (input.pattern.length > MAX_REGEX_LENGTH) return errorResult(`pattern is too long (${input.pattern.length} characters; at most ${MAX_REGEX_LENGTH})`);
      const compiled = compileRegex(input.pattern, input.ignoreCase === true);
      if (!compiled.ok) return errorResult(`invalid regular expression: ${compiled.error}`);
      let globMatch: ((rel: string) => boolean) | undefined;
      if (input.glob !== undefined) {
        const problem = globPatternProblem(input.glob, 'glob');
        if (problem) return errorResult(problem);
        try {
          const basenameOnly = !input.glob.includes('/');
          const isMatch = micromatch.matcher(input.glob, { dot: true });
          globMatch = (rel) => isMatch(basenameOnly ? rel.slice(rel.lastIndexOf('/') + 1) : rel);
        } catch (error) {
          return errorResult(`invalid glob: ${(error as Error).message}`);
        }
      }
      const resolved = await resolveWorkspacePath(context.workspaceRoot, input.path ?? '.');
      if (!resolved.ok) return errorResult(resolved.error);
      const info = await stat(resolved.absolute).catch(() => undefined);
      if (!info) return errorResult(`${resolved.relative}: no such file or directory`);

      const run = createRegexRunner(compiled.regex, regexTimeoutMs);
      const matches: string[] = [];
      const budget = Math.max(500, context.limits.toolOutputLimit - 300);
      let used = 0;
      let full = false;
      let searched = 0;
      let binary = 0;
      let secret = 0;
      let failure: string | undefined;
      let batch: Pending[] = [];
      let batchBytes = 0;

      const flush = (): void => {
        if (batch.length === 0 || full || failure) return;
        const result = run(batch.map((p) => p.text));
        if (!result.ok) {
          failure = result.error;
          return;
        }
        for (const i of result.matches) {
          const p = batch[i]!;
          const text = p.text.length > GREP_MAX_LINE_CHARS ? `${p.text.slice(0, GREP_MAX_LINE_CHARS)}…` : p.text;
          const line = `${p.file}:${p.lineNo}: ${text}`;
          if (matches.length >= GREP_MAX_MATCHES || used + line.length + 1 > budget) {
            full = true;
            break;
          }
          matches.push(line);
          used += line.length + 1;
        }
        batch = [];
        batchBytes = 0;
      };

      const realRoot = rootOf(resolved.absolute, resolved.relative);
      const searchFile = async (file: WalkedFile, explicit: boolean): Promise<void> => {
        let handle;
        try {
          handle = explicit ? await openCheckedForRead(file.absolute) : await openForRead(file.absolute);
        } catch {
          return;
        }
        try {
          if (!(await handle.stat()).isFile()) return;
          // A directory swapped for a symlink mid-walk must not lead the search outside.
          const location = explicit ? undefined : await locationOf(handle);
          if (location !== undefined && !isInsideWorkspace(realRoot, location)) return;
          if (await isBinaryHandle(handle)) {
            binary += 1;
            return;
          }
          searched += 1;
          await scanLines(handle, {
            maxLineBytes: GREP_MAX_LINE_BYTES,
            signal: context.signal,
            onLine: (lineNo, text) => {
              batch.push({ file: file.relative, lineNo, text });
              batchBytes += text.length;
              if (batch.length >= BATCH_LINES || batchBytes >= BATCH_BYTES) flush();
              return !full && failure === undefined;
            },
          });
        } finally {
          await handle.close();
        }
      };

      if (info.isFile()) {
        await searchFile({ absolute: resolved.absolute, relative: resolved.relative }, true);
      } else if (info.isDirectory()) {
        const filter = createIgnoreFilter(realRoot);
        for await (const file of walkFiles(resolved.absolute, resolved.relative, { filter, signal: context.signal })) {
          if (globMatch && !globMatch(file.relative)) continue;
          if (secretPath(file.relative)) {
            secret += 1;
            continue;
          }
          await searchFile(file, false);
          if (full || failure !== undefined || context.signal.aborted) break;
        }
      } else {
        return errorResult(`${resolved.relative} is not a regular file or directory`);
      }
      flush();

      if (context.signal.aborted) return errorResult(`grep interrupted after ${count(searched, 'file')}`);
      if (failure !== undefined) return errorResult(`grep stopped: ${failure}`);
      const where = resolved.relative === '.' ? 'the workspace' : resolved.relative;
      const skipped = `${binary > 0 ? `, ${binary} binary skipped` : ''}${secret > 0 ? `, ${count(secret, 'secret file')} skipped (the rules deny reading ${secret > 1 ? 'them' : 'it'})` : ''}`;
      const stats = `${count(searched, 'file')} searched${skipped}`;
      const shownPattern = clip(input.pattern, 80);
      if (matches.length === 0) return okResult(`No matches for /${shownPattern}/ in ${where} (${stats})`, `/${shownPattern}/: no matches`);
      const lines = [...matches];
      if (full) lines.push(`[match limit reached: showing the first ${matches.length} matches; narrow the pattern, path or glob to see the rest]`);
      if (secret > 0) lines.push(`[${count(secret, 'secret file')} skipped (the rules deny reading ${secret > 1 ? 'them' : 'it'})]`);
      return okResult(lines.join('\n'), `/${shownPattern}/: ${count(matches.length, 'match', 'matches')}${full ? '+' : ''} (${stats})`);
    },
  };
}

/** `grep` with the default regex watchdog (REGEX_BATCH_TIMEOUT_MS per batch) and the shipped rules' secret paths (a run passes its rules': registry.ts). */
export const grepTool: Tool<Input> = createGrepTool({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS) });
