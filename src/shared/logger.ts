import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * The one logger factory of the project, for the gateway and the sandbox alike. Nothing either
 * logs is meant to carry an API key (a key is never put in a log object), and redaction covers the
 * header names a future log call might include by mistake. Tests build their loggers here too, so
 * the whole suite's logs, searched for keys at its end (test/global-setup.ts), come from the
 * configuration production runs.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: {
      paths: ['authorization', '*.authorization', '*.headers.authorization', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
