// Preloaded by profile-engine-stream.ts (NODE_OPTIONS=--require): the first SIGUSR2 starts V8's
// CPU profiler (200 µs samples), the next stops it and writes $LEGION_PROFILE_OUT.cpuprofile.
const inspector = require('node:inspector');
const fs = require('node:fs');
const session = new inspector.Session();
session.connect();
let running = false;
process.on('SIGUSR2', () => {
  running = !running;
  if (running) {
    session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start')));
    return;
  }
  session.post('Profiler.stop', (error, result) => {
    if (!error) fs.writeFileSync(`${process.env.LEGION_PROFILE_OUT}.cpuprofile`, JSON.stringify(result.profile));
  });
});
