// A `--require` preload (test/e2e/start-missing-files.test.ts): every synchronous call of node:fs
// that throws ENOENT from here to the first full frame (first-frame-write.cjs) is written, one a
// line (the call and its path), to $LEGION_MISSING_THROWS_OUT at that frame.
'use strict';
const fs = require('node:fs');
const { onFirstFrameWrite } = require('./first-frame-write.cjs');

const thrown = [];
let counting = true;
for (const name of Object.keys(fs)) {
  const original = fs[name];
  if (!name.endsWith('Sync') || typeof original !== 'function') continue;
  fs[name] = Object.assign(function (...args) {
    try {
      return original.apply(this, args);
    } catch (error) {
      if (counting && error && error.code === 'ENOENT') thrown.push(`${name} ${String(args[0])}`);
      throw error;
    }
  }, original);
}
onFirstFrameWrite(() => {
  counting = false;
  fs.writeFileSync(process.env.LEGION_MISSING_THROWS_OUT, thrown.map((t) => `${t}\n`).join(''));
});
