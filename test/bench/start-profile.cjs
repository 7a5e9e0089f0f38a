// A `--require` preload for profiling a start to its first frame (docs/performance.md#start-up):
//   LEGION_PROFILE_OUT=<dir> node <SNAPSHOT_V8_FLAGS of scripts/snapshot.mjs> --require test/bench/start-profile.cjs \
//     --snapshot-blob dist/legion-snapshot-*.blob -- [args]
// Starts node:inspector's CPU profiler at once and stops it at the first write to stdout that
// holds a full frame (both FIRST_FRAME words of test/bench/harness.ts), then writes
// <dir>/<pid>.cpuprofile and <dir>/<pid>.json ({ cpuMs: CPU time used at that write, preloadCpuMs:
// at this preload, i.e. once Node started and the snapshot was deserialized; wallMs and
// preloadWallMs: the same moments on the clock, since the process started }).
// LEGION_PROFILE_CPU=1: no profiler, only the two CPU times (the profiler inflates compilation).
// A preload, not `--cpu-prof`: V8 flags change what the start does (a snapshot is refused to a
// start with other flags, a code cache to one with other flags). NODE_OPTIONS disables the snapshot.
'use strict';
const inspector = require('node:inspector');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');
const { onFirstFrameWrite } = require('../helpers/first-frame-write.cjs');

const out = process.env.LEGION_PROFILE_OUT;
const cpuNow = () => {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
};
const preloadCpuMs = cpuNow();
const preloadWallMs = performance.now();
if (out) {
  const profile = process.env.LEGION_PROFILE_CPU !== '1';
  const session = new inspector.Session();
  if (profile) {
    session.connect();
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: Number(process.env.LEGION_PROFILE_INTERVAL_US ?? 200) });
    session.post('Profiler.start');
  }
  onFirstFrameWrite(() => {
    const cpuMs = cpuNow();
    const wallMs = performance.now();
    mkdirSync(out, { recursive: true });
    if (!profile) {
      writeFileSync(join(out, `${process.pid}.json`), JSON.stringify({ cpuMs, preloadCpuMs, wallMs, preloadWallMs }));
      return;
    }
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(join(out, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
      writeFileSync(join(out, `${process.pid}.json`), JSON.stringify({ cpuMs, preloadCpuMs, wallMs, preloadWallMs, error: error ? String(error) : undefined }));
      session.disconnect();
    });
  });
}
