// Progress on a terminal (pages, rows, request rate, ETA); nothing otherwise, since cron and systemd
// want one summary line per run.
import cliProgress from 'cli-progress';
import type { Source } from '../domain/granularity.js';
import type { CollectProgress } from '../collect/collect.js';

export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): (CollectProgress & { stop(): void }) | undefined {
  if (!stream.isTTY) return undefined;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: 'collecting {bar} {value} pages | {rows} values | {rate} pages/s | ETA {eta_formatted}',
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let rows = 0;
  let pages = 0;
  const started = Date.now();
  bar.start(1, 0, { rows: 0, rate: '0.0' });
  return {
    onPlanned(expected: number) {
      bar.setTotal(Math.max(expected, pages, 1));
    },
    onPage(_source: Source, n: number) {
      pages += 1;
      rows += n;
      if (pages > bar.getTotal()) bar.setTotal(pages);
      bar.update(pages, { rows: rows.toLocaleString('en-US'), rate: (pages / Math.max(1, (Date.now() - started) / 1000)).toFixed(1) });
    },
    stop() {
      bar.stop();
    },
  };
}
