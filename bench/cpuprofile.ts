// Summarises a V8 .cpuprofile (node --cpu-prof) into the functions that took the most CPU: self time
// (samples whose top frame is the function) and total time (samples with the function anywhere on the
// stack), so the benchmark's notes can name the hot path without a profiler UI.
// Run: node dist/bench/cpuprofile.js <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber?: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface HotFunction {
  /** `name (file:line)`, with the file shortened to its path inside the project or node_modules. */
  where: string;
  selfMs: number;
  selfShare: number;
  totalMs: number;
  totalShare: number;
}

function label(node: CpuProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  if (!url) return name;
  const file = url.replace(/^file:\/\//, '');
  const m = /(node_modules\/.*|(?:src|bench|dist)\/.*)$/.exec(file);
  return `${name} (${m?.[1] ?? file}:${lineNumber + 1})`;
}

/** The `top` functions by self time, each with its total (inclusive) time; idle and GC are kept, as themselves. */
export function summariseProfile(profile: CpuProfile, top = 15): { sampledMs: number; functions: HotFunction[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let sampledUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    const id = profile.samples[i] as number;
    const node = byId.get(id);
    if (!node || dt <= 0) continue;
    sampledUs += dt;
    const top = label(node);
    self.set(top, (self.get(top) ?? 0) + dt);
    // Inclusive time: each distinct function on the stack once, however deep its recursion.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (!n) break;
      const l = label(n);
      if (l === '(root)' || seen.has(l)) continue;
      seen.add(l);
      total.set(l, (total.get(l) ?? 0) + dt);
    }
  }
  const functions = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, us]) => ({
      where,
      selfMs: us / 1000,
      selfShare: sampledUs > 0 ? us / sampledUs : 0,
      totalMs: (total.get(where) ?? us) / 1000,
      totalShare: sampledUs > 0 ? (total.get(where) ?? us) / sampledUs : 0,
    }));
  return { sampledMs: sampledUs / 1000, functions };
}

/** A Markdown table of the summary. */
export function profileTable(summary: { sampledMs: number; functions: HotFunction[] }): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const lines = ['| function | self | total |', '|---|---:|---:|'];
  for (const f of summary.functions) lines.push(`| \`${f.where}\` | ${pct(f.selfShare)} | ${pct(f.totalShare)} |`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node dist/bench/cpuprofile.js <file.cpuprofile> [top]');
    process.exit(64);
  }
  const summary = summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(process.argv[3] ?? 15));
  console.log(`sampled ${(summary.sampledMs / 1000).toFixed(1)} s`);
  console.log(profileTable(summary));
}
