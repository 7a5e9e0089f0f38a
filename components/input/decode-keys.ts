/**
 * Turn raw terminal input (as Ink's input parser splits it: one escape sequence, or a run of
 * plain characters) into key presses named like the keymap (`ctrl+n`, `shift+tab`, `f1`, `a`).
 * Bracketed paste (ESC[200~ … ESC[201~) becomes one `paste` press; an unbracketed chunk that
 * has a line break inside it is taken as a paste too, so pasted lines never send one by one.
 */
export interface KeyPress {
  /** Canonical key name, `text` (several typed characters) or `paste`. */
  readonly name: string;
  /** The characters it types: the character itself, the typed run, or the pasted text. */
  readonly text: string;
}

const CSI_NAMES: Readonly<Record<string, string>> = {
  A: 'up', B: 'down', C: 'right', D: 'left', H: 'home', F: 'end', Z: 'shift+tab', P: 'f1', Q: 'f2', R: 'f3', S: 'f4',
};
const TILDE_NAMES: Readonly<Record<string, string>> = {
  '1': 'home', '2': 'insert', '3': 'delete', '4': 'end', '5': 'pageup', '6': 'pagedown', '7': 'home', '8': 'end',
  '11': 'f1', '12': 'f2', '13': 'f3', '14': 'f4', '15': 'f5', '17': 'f6', '18': 'f7', '19': 'f8', '20': 'f9', '21': 'f10', '23': 'f11', '24': 'f12',
};
const LINUX_F: Readonly<Record<string, string>> = { A: 'f1', B: 'f2', C: 'f3', D: 'f4', E: 'f5' };

/** xterm modifier parameter (1 + shift + 2·alt + 4·ctrl) → prefix. */
function modifiers(param: string | undefined): string {
  const m = Number(param ?? '1') - 1;
  if (!Number.isFinite(m) || m <= 0) return '';
  return `${m & 4 ? 'ctrl+' : ''}${m & 2 ? 'alt+' : ''}${m & 1 ? 'shift+' : ''}`;
}

/** Name one key from a single chunk that is not a run of text. */
export function nameOf(seq: string): string | null {
  if (seq === '\x1b' || seq === '\x1b\x1b') return 'escape';
  if (seq.length === 1) return controlName(seq);
  let m = /^\x1b\[(?:1;(\d+))?([A-HPQRSZ])$/.exec(seq);
  if (m) return (CSI_NAMES[m[2]!] === 'shift+tab' ? '' : modifiers(m[1])) + CSI_NAMES[m[2]!]!;
  m = /^\x1b\[(\d+)(?:;(\d+))?~$/.exec(seq);
  if (m && TILDE_NAMES[m[1]!]) return modifiers(m[2]) + TILDE_NAMES[m[1]!]!;
  m = /^\x1bO([A-DHFPQRS])$/.exec(seq);
  if (m) return CSI_NAMES[m[1]!]!;
  m = /^\x1b\[\[([A-E])$/.exec(seq);
  if (m) return LINUX_F[m[1]!]!;
  if (seq.length === 2 && seq[0] === '\x1b') {
    const inner = controlName(seq[1]!);
    return inner ? (inner.startsWith('ctrl+') ? `ctrl+alt+${inner.slice(5)}` : `alt+${inner}`) : null;
  }
  return null;
}

function controlName(ch: string): string | null {
  const code = ch.charCodeAt(0);
  if (ch === '\r') return 'enter';
  if (ch === '\n') return 'ctrl+j';
  if (ch === '\t') return 'tab';
  if (ch === '\x7f' || ch === '\b') return 'backspace';
  if (ch === ' ') return 'space';
  if (code === 0) return 'ctrl+space';
  if (code < 27) return `ctrl+${String.fromCharCode(code + 96)}`;
  if (code < 32) return null;
  return ch;
}

export interface KeyDecoder {
  feed(chunk: string): KeyPress[];
}

export function createKeyDecoder(): KeyDecoder {
  let pasting: string[] | null = null;
  return {
    feed(chunk) {
      if (chunk === '\x1b[200~') { pasting = []; return []; }
      if (pasting !== null) {
        if (chunk === '\x1b[201~') {
          const text = pasting.join('').replace(/\r\n?/g, '\n');
          pasting = null;
          return text === '' ? [] : [{ name: 'paste', text }];
        }
        const end = chunk.indexOf('\x1b[201~');
        if (end === -1) { pasting.push(chunk); return []; }
        pasting.push(chunk.slice(0, end));
        const text = pasting.join('').replace(/\r\n?/g, '\n');
        pasting = null;
        return [{ name: 'paste', text }, ...this.feed(chunk.slice(end + 6))];
      }
      if (chunk === '') return [];
      if (chunk.startsWith('\x1b')) {
        const name = nameOf(chunk);
        // Esc typed just before an arrow or function key can arrive as one chunk (ESC ESC [ B):
        // it is two keys, Esc (which closes a modal) and then the key, not nothing.
        if (!name && chunk.length > 2 && chunk.startsWith('\x1b\x1b')) return [{ name: 'escape', text: '' }, ...this.feed(chunk.slice(1))];
        return name ? [{ name, text: name.length === 1 ? name : '' }] : [];
      }
      return decodeRun(chunk);
    },
  };
}

/** A run of plain characters: typed keys, or a paste when a line break sits inside it. */
function decodeRun(chunk: string): KeyPress[] {
  const inner = chunk.replace(/[\r\n]+$/, '');
  if (/[\r\n]/.test(inner) && /[^\r\n]/.test(inner)) {
    return [{ name: 'paste', text: chunk.replace(/\r\n?/g, '\n').replace(/\n+$/, '') }];
  }
  const out: KeyPress[] = [];
  let text = '';
  const flush = (): void => {
    if (text === '') return;
    out.push([...text].length === 1 ? { name: text === ' ' ? 'space' : text, text } : { name: 'text', text });
    text = '';
  };
  for (const ch of chunk) {
    const code = ch.codePointAt(0)!;
    if (code >= 32 && code !== 127) { text += ch; continue; }
    flush();
    const name = controlName(ch);
    if (name) out.push({ name, text: '' });
  }
  flush();
  return out;
}

/** A key that types text (a character, a run of them, a space, a paste) rather than a command key. */
export function typesText(key: KeyPress): boolean {
  if (key.name === 'paste') return key.text !== '';
  if (key.name === 'text' || key.name === 'space') return key.text !== '' && !/[\x00-\x1f\x7f]/.test(key.text);
  return [...key.name].length === 1 && key.text === key.name && !/[\x00-\x1f\x7f]/.test(key.text);
}
