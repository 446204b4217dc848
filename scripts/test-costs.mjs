// `npm run test:costs`: writes test/support/costs.json from vitest's record of each test file's last
// duration (its results cache, kept by local runs), so a run with no record of its own (a fresh clone,
// CI) still starts the costliest files first (test/support/sequencer.ts). Run it after a whole `npm test`.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CACHE = 'node_modules/.vite/vitest';
const OUT = 'test/support/costs.json';
const caches = existsSync(CACHE)
  ? readdirSync(CACHE)
      .map((d) => join(CACHE, d, 'results.json'))
      .filter((f) => existsSync(f))
  : [];
if (caches.length === 0) {
  console.error(`no vitest results in ${CACHE}/: run npm test first, then npm run test:costs`);
  process.exit(1);
}
const seconds = {};
for (const file of caches) {
  const { results } = JSON.parse(readFileSync(file, 'utf8'));
  for (const [key, r] of results) {
    const path = key.slice(key.indexOf(':') + 1);
    if (typeof r.duration === 'number' && existsSync(path)) seconds[key] = Math.round(r.duration / 100) / 10;
  }
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(OUT, JSON.stringify({ seconds: sorted }, null, 2) + '\n');
console.log(
  `${OUT}: ${Object.keys(sorted).length} files, ${Object.values(sorted)
    .reduce((a, b) => a + b, 0)
    .toFixed(0)} s in all`,
);
