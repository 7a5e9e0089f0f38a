// Build-time patch of Ink's ANSI tokenizer (ink/build/ansi-tokenizer.js). Ink sanitizes the
// text of every text node each time it squashes one (measuring and rendering, every frame):
// `hasAnsiControlCharacters` first, which walks the string code point by code point through
// the string iterator when it holds no ESC (~5 ms of a first frame, profiled). One regular
// expression answers the same: ESC, or a C1 control (U+0080–U+009F). The iterator's code points
// of a surrogate pair, or a lone surrogate, are never in that range, and UTF-16 units in it are
// those characters themselves, so testing units is testing code points
// (test/unit/build/ink-control-fast.test.ts checks it against Ink's own function).

/** Ink's function, as its build has it (scripts/build.mjs fails if it changed). */
export const INK_HAS_CONTROL = `export const hasAnsiControlCharacters = (text) => {
    if (text.includes(escapeCharacter)) {
        return true;
    }
    for (const character of text) {
        if (isC1ControlCharacter(character)) {
            return true;
        }
    }
    return false;
};`;

/** The same answer from one regular expression. */
export const FAST_HAS_CONTROL = 'export const hasAnsiControlCharacters = (text) => /[\\u001B\\u0080-\\u009F]/.test(text);';
