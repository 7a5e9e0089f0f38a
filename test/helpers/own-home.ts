// The first import of every test file (test/unit/foundation/test-home.test.ts checks it): a file
// run directly (`node --import tsx --test <file>`, `npx tsx --test <file>`) gets a home of its own
// as under scripts/test.mjs, before any other module reads HOME or TMPDIR
// (docs/development.md#a-home-of-its-own). Under the runner it does nothing.
import { adoptTestHome } from '../../scripts/test-home.mjs';

adoptTestHome(process);
