#!/usr/bin/env node
// `npm pack` hooks. prepack: builds dist/ (unless USAGE_PACK_PREBUILT=1: the tests pack the dist/ they
// built) and takes `prepare` out of the packed package.json: it builds a checkout, and in a tarball npm
// would only warn that an install script is not allowed. postpack: puts package.json back as it was.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const SAVED = '.package.json.packing';
const step = process.argv[2];
// A pack killed between the two hooks left the stripped file: the saved one is the real one.
if (existsSync(SAVED)) renameSync(SAVED, 'package.json');
if (step === 'prepack') {
  if (process.env.USAGE_PACK_PREBUILT !== '1')
    execFileSync(process.execPath, ['scripts/prepare.mjs'], { stdio: 'inherit' });
  const text = readFileSync('package.json', 'utf8');
  const manifest = JSON.parse(text);
  delete manifest.scripts.prepare;
  writeFileSync(SAVED, text);
  writeFileSync('package.json', JSON.stringify(manifest, null, 2) + '\n');
}
