import { pino, type Logger } from 'pino';

/** Structured JSON logs on stdout. Authorization headers never reach a log line. */
export function createLogger(level: string): Logger {
  return pino({ level, redact: ['req.headers.authorization', 'authorization', 'headers.authorization'] });
}
