/**
 * The keymap (docs/design.md#the-tui) as data: action → keys. Defaults are a contract (external tests
 * drive the app by them); `keymap:` in config replaces the keys of the actions it names.
 * Keys are written like `ctrl+n`, `shift+tab`, `pageup`, `f1`, `?`. A key bound to a
 * printable character (like `?`) acts only while the composer is empty; otherwise it types.
 */
export type Action =
  | 'send' | 'newline' | 'nextLane' | 'prevLane' | 'newSession' | 'switcher' | 'approvals' | 'history'
  | 'scrollUp' | 'scrollDown' | 'scrollTop' | 'scrollBottom' | 'interrupt' | 'clear' | 'help' | 'toggleTools'
  | 'checkpoints'
  | 'compact';

export interface ActionInfo {
  readonly action: Action;
  readonly keys: readonly string[];
  readonly description: string;
}

export const DEFAULT_KEYMAP: readonly ActionInfo[] = [
  { action: 'send', keys: ['enter'], description: 'send the message' },
  { action: 'newline', keys: ['ctrl+j'], description: 'new line in the message' },
  { action: 'nextLane', keys: ['tab'], description: 'next lane (after @name: complete the name)' },
  { action: 'prevLane', keys: ['shift+tab'], description: 'previous lane' },
  { action: 'newSession', keys: ['ctrl+n'], description: 'new named session' },
  { action: 'switcher', keys: ['ctrl+p'], description: 'session switcher' },
  { action: 'approvals', keys: ['ctrl+y'], description: 'approval queue' },
  { action: 'history', keys: ['ctrl+o'], description: 'history browser' },
  { action: 'scrollUp', keys: ['pageup'], description: 'scroll the focused lane up' },
  { action: 'scrollDown', keys: ['pagedown'], description: 'scroll the focused lane down' },
  { action: 'scrollTop', keys: ['home'], description: 'scroll to the start of the lane' },
  { action: 'scrollBottom', keys: ['end'], description: 'scroll to the end and follow' },
  { action: 'interrupt', keys: ['escape'], description: "close the modal, else interrupt the focused lane's turn (a workflow step's idle lane: cancel the workflow)" },
  { action: 'clear', keys: ['ctrl+c'], description: 'clear the message; twice within 2 s quits' },
  { action: 'help', keys: ['f1', '?'], description: 'help (? only on an empty message)' },
  { action: 'toggleTools', keys: ['ctrl+t'], description: 'unfold / fold tool results in the focused lane' },
  { action: 'checkpoints', keys: ['ctrl+r'], description: "checkpoints of the focused lane: what its agent changed, undo it" },
  { action: 'compact', keys: ['ctrl+l'], description: "compact the focused session's context now (summary of older messages)" },
];

export const ACTIONS: readonly Action[] = DEFAULT_KEYMAP.map((a) => a.action);

export interface Keymap {
  /** Effective bindings in help order. */
  readonly entries: readonly ActionInfo[];
  keysOf(action: Action): readonly string[];
  /** The action of a key, honouring the empty-composer rule for printable keys. */
  match(key: string, composerEmpty: boolean): Action | null;
}

export type KeymapResult = { ok: true; keymap: Keymap } | { ok: false; error: string };

const NAMED = new Set([
  'enter', 'tab', 'escape', 'space', 'backspace', 'delete', 'insert', 'up', 'down', 'left', 'right',
  'pageup', 'pagedown', 'home', 'end', ...Array.from({ length: 12 }, (_, i) => `f${i + 1}`),
]);
const ALIASES: Readonly<Record<string, string>> = {
  return: 'enter', esc: 'escape', del: 'delete', pgup: 'pageup', pgdn: 'pagedown', ins: 'insert',
  arrowup: 'up', arrowdown: 'down', arrowleft: 'left', arrowright: 'right',
};
const SAME_AS: Readonly<Record<string, string>> = { 'ctrl+i': 'tab', 'ctrl+m': 'enter', 'ctrl+[': 'escape', 'ctrl+h': 'backspace' };

/** Canonical form `[ctrl+][alt+][shift+]name`, or an explanation of why a terminal cannot send it. */
export function normalizeKey(spec: string): { ok: true; key: string } | { ok: false; error: string } {
  const raw = spec.trim();
  if (raw.length === 1) return raw === ' ' ? { ok: true, key: 'space' } : { ok: true, key: raw };
  const parts = raw.split('+');
  // A trailing '+' means the '+' key itself ("ctrl++").
  if (raw.endsWith('++')) { parts.pop(); parts[parts.length - 1] = '+'; }
  const mods = new Set<string>();
  for (const m of parts.slice(0, -1)) {
    const lower = m.toLowerCase();
    const mod = lower === 'control' ? 'ctrl' : lower === 'meta' || lower === 'option' ? 'alt' : lower;
    if (mod !== 'ctrl' && mod !== 'alt' && mod !== 'shift') return { ok: false, error: `"${spec}": unknown modifier "${m}" (use ctrl, alt, shift)` };
    mods.add(mod);
  }
  let name = parts[parts.length - 1]!;
  if (name.length > 1) {
    const lower = name.toLowerCase();
    name = ALIASES[lower] ?? lower;
    if (!NAMED.has(name)) return { ok: false, error: `"${spec}": unknown key "${parts[parts.length - 1]}"` };
  } else if (name === '') {
    return { ok: false, error: `"${spec}": missing key name` };
  }
  if (name.length === 1) {
    if (mods.has('ctrl')) {
      const letter = name.toLowerCase();
      if (!/^[a-z]$/.test(letter) || mods.has('shift')) {
        return { ok: false, error: `"${spec}": a terminal sends Ctrl only with a letter (ctrl+a … ctrl+z)` };
      }
      name = letter;
    } else if (mods.has('shift')) {
      if (!/^[a-z]$/i.test(name)) return { ok: false, error: `"${spec}": write the shifted character itself (e.g. "?")` };
      mods.delete('shift');
      name = name.toUpperCase();
    }
  } else if (mods.has('shift') && !mods.has('ctrl') && !mods.has('alt') && !['tab', 'up', 'down', 'left', 'right', 'home', 'end', 'pageup', 'pagedown', 'delete'].includes(name)) {
    return { ok: false, error: `"${spec}": a terminal does not report shift with ${name}` };
  }
  const key = `${mods.has('ctrl') ? 'ctrl+' : ''}${mods.has('alt') ? 'alt+' : ''}${mods.has('shift') ? 'shift+' : ''}${name}`;
  const same = SAME_AS[key];
  if (same) return { ok: false, error: `"${spec}": a terminal sends the same code as ${same}` };
  return { ok: true, key };
}

/** Merge `overrides` (config `keymap:`, action → key or keys) over the defaults and validate. */
export function buildKeymap(overrides: Readonly<Record<string, string | readonly string[]>> = {}): KeymapResult {
  const byAction = new Map<Action, string[]>(DEFAULT_KEYMAP.map((a) => [a.action, [...a.keys]]));
  for (const [action, value] of Object.entries(overrides)) {
    if (!byAction.has(action as Action)) {
      return { ok: false, error: `keymap: unknown action "${action}" (actions: ${ACTIONS.join(', ')})` };
    }
    const keys: string[] = [];
    for (const spec of typeof value === 'string' ? [value] : value) {
      const parsed = normalizeKey(spec);
      if (!parsed.ok) return { ok: false, error: `keymap.${action}: ${parsed.error}` };
      if (!keys.includes(parsed.key)) keys.push(parsed.key);
    }
    byAction.set(action as Action, keys);
  }
  const owner = new Map<string, Action>();
  for (const [action, keys] of byAction) {
    for (const key of keys) {
      const other = owner.get(key);
      if (other) return { ok: false, error: `keymap: "${key}" is bound to both "${other}" and "${action}"` };
      owner.set(key, action);
    }
  }
  const entries = DEFAULT_KEYMAP.map((a) => ({ ...a, keys: byAction.get(a.action)! }));
  return {
    ok: true,
    keymap: {
      entries,
      keysOf: (action) => byAction.get(action) ?? [],
      match(key, composerEmpty) {
        const action = owner.get(key);
        if (!action) return null;
        if (isPrintable(key) && !composerEmpty) return null;
        return action;
      },
    },
  };
}

/** A key that types a character when no action takes it. */
export function isPrintable(key: string): boolean {
  return [...key].length === 1 || key === 'space';
}

const DISPLAY: Readonly<Record<string, string>> = {
  enter: 'Enter', tab: 'Tab', escape: 'Esc', space: 'Space', backspace: 'Backspace', delete: 'Delete', insert: 'Insert',
  up: '↑', down: '↓', left: '←', right: '→', pageup: 'PgUp', pagedown: 'PgDn', home: 'Home', end: 'End',
};

/** `ctrl+n` → `Ctrl+N`, `pageup` → `PgUp`, `f1` → `F1`. */
export function formatKey(key: string): string {
  const parts = key.length > 1 && key.includes('+') && !key.endsWith('++') ? key.split('+') : [key];
  if (key.endsWith('++')) { parts.splice(0, parts.length, ...key.slice(0, -2).split('+'), '+'); }
  return parts.map((p, i) => {
    if (i < parts.length - 1) return p[0]!.toUpperCase() + p.slice(1);
    if (DISPLAY[p]) return DISPLAY[p];
    if (/^f\d+$/.test(p)) return p.toUpperCase();
    return parts.length > 1 ? p.toUpperCase() : p;
  }).join('+');
}
