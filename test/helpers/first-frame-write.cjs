// For `--require` preloads that measure a start to its first frame (test/bench/start-profile.cjs,
// test/fixtures/snapshot/builtins-at-frame.cjs).
'use strict';

/**
 * Call `atFrame` once, at the first write to stdout that holds a full first frame (both
 * FIRST_FRAME words of test/bench/harness.ts: `legion` and `demo`), before that write goes out.
 */
function onFirstFrameWrite(atFrame) {
  const write = process.stdout.write;
  let done = false;
  process.stdout.write = function (chunk, ...rest) {
    if (!done) {
      const text = String(chunk).toLowerCase();
      if (text.includes('legion') && text.includes('demo')) {
        done = true;
        atFrame();
      }
    }
    return write.call(this, chunk, ...rest);
  };
}

module.exports = { onFirstFrameWrite };
