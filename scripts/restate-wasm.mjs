// Restate's WebAssembly VM out of the bundle's source (docs/performance.md#the-start-up-snapshot).
// The Restate SDK carries its shared core as 2.2 MB of base64 in one string literal
// (sdk_shared_core_wasm_bindings.js), a third of the bundle's source. Only `legion worker` and
// an engine hub load Restate, yet every start held that text: the start-up snapshot keeps the
// bundle's whole source (V8 compiles functions from it as they first run), so deserializing
// and checksumming it cost every start ~3 ms of CPU per MB (loaded machine). The build writes
// the module's bytes to dist/legion-restate-<hash>.wasm and the bindings read that file (beside
// the bundle: `__dirname`, the loader's and the snapshot's wrapper parameter) when Restate is
// first evaluated, as it was decoded from base64 there before.
import { createHash } from 'node:crypto';
import { patchOnce } from './build-tables.mjs';

/** The module esbuild's onLoad patches. */
export const RESTATE_WASM_BINDINGS = /[\\/]@restatedev[\\/]restate-sdk[\\/]dist[\\/]endpoint[\\/]handlers[\\/]vm[\\/]sdk_shared_core_wasm_bindings\.js$/;

/** The file name a build writes `bytes` under (content-addressed, like the bundle). */
export const restateWasmName = (bytes) => `legion-restate-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.wasm`;

/**
 * The bindings' source without its base64 literal, reading `name` beside the bundle instead,
 * and the module's bytes. Fails the build when the SDK's layout changed (one literal, one use).
 */
export function splitRestateWasm(source) {
  const literal = /^const __wasm_base64__ = "([A-Za-z0-9+/]+={0,2})";$/m.exec(source);
  if (!literal) throw new Error('build: restate-sdk\'s wasm bindings no longer hold `const __wasm_base64__ = "…";` (scripts/restate-wasm.mjs)');
  const bytes = Buffer.from(literal[1], 'base64');
  if (bytes.subarray(0, 4).toString('latin1') !== '\0asm') throw new Error('build: restate-sdk\'s __wasm_base64__ is not a WebAssembly module');
  const name = restateWasmName(bytes);
  let text = patchOnce(source, literal[0], 'const __wasm_base64__ = null;', 'restate-sdk (wasm literal)');
  text = patchOnce(
    text,
    'const bytes = __decode_base64__(__wasm_base64__);',
    `const bytes = require("node:fs").readFileSync(require("node:path").join(__dirname, ${JSON.stringify(name)}));`,
    'restate-sdk (wasm read from its file)',
  );
  return { text, bytes, name };
}
