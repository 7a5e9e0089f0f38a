/** Decode the body of `$'…'` (ANSI-C quoting), best effort. */
export function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs, (whole, esc: string) => {
    const head = esc[0]!;
    if (head === 'x' || head === 'u' || head === 'U') {
      const code = parseInt(esc.slice(1), 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    if (/[0-7]/.test(head)) return String.fromCharCode(parseInt(esc, 8) & 0xff);
    if (head === 'c' && esc.length === 2) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
    return simple[esc] ?? whole;
  });
}
