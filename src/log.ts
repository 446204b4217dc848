// Structured logging: JSON lines when stderr is not a terminal (cron, systemd), readable lines on a terminal.
// Logs go to stderr so that stdout stays for command output (the sandbox's ready line, --json results).

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  json?: boolean;
  write?: (line: string) => void;
  now?: () => Date;
}

// Field names whose values are never written, whatever the caller passes.
const SECRET_KEYS = /authorization|api[_-]?key|token|secret|password/i;

function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET_KEYS.test(k)) out[k] = '[redacted]';
    else if (typeof v === 'bigint') out[k] = v.toString();
    else if (v instanceof Error) out[k] = v.message;
    else out[k] = v;
  }
  return out;
}

/** Where default log lines go while a progress display owns the terminal: above it, never into it. */
let stderrSink: ((line: string) => void) | null = null;
export function setStderrSink(sink: ((line: string) => void) | null): void {
  stderrSink = sink;
}

export function createLogger(opts: LoggerOptions = {}, bound: LogFields = {}): Logger {
  const min = LEVELS[opts.level ?? 'info'];
  const json = opts.json ?? !process.stderr.isTTY;
  const write = opts.write ?? ((line: string) => (stderrSink ? stderrSink(line) : process.stderr.write(line + '\n')));
  const now = opts.now ?? (() => new Date());
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (LEVELS[level] < min) return;
    const all = redact({ ...bound, ...fields });
    if (json) {
      write(JSON.stringify({ time: now().toISOString(), level, msg, ...all }));
    } else {
      const extra = Object.entries(all)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      write(`${level === 'info' ? '' : level.toUpperCase() + ' '}${msg}${extra ? '  ' + extra : ''}`);
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (f) => createLogger(opts, { ...bound, ...f }),
  };
}

/** A logger that drops everything; the default for library code called without one. */
export const silentLogger: Logger = createLogger({
  write: () => {
    // dropped: this logger is for callers that log nothing
  },
  level: 'error',
});
