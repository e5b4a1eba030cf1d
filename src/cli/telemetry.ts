/**
 * The CLI's telemetry (and `serve`'s): the standard OpenTelemetry variables decide whether anything
 * is exported (../core/telemetry/config.ts); without an endpoint nothing is loaded or sent. A
 * problem with the variables, and a collector that is down, are each a warning on stderr, once; the
 * command goes on and its exit waits at most `SHUTDOWN_BOUND_MS` for the last export.
 */
import { exportFromEnvironment } from '../core/telemetry/config';
import { cleanerOf, type TelemetryExporter } from '../core/telemetry/exporter';
import { startExporter } from '../core/telemetry/load';
import { createMasker } from '../core/scan/mask';

/** What `mcp-host` says it is in `service.version` and `mcp_host.client.version`. */
export const CLI_VERSION = '0.1.0';

/** The exporter the variables ask for, or undefined when they ask for none; `secrets` (header values) never appear in an export. */
export function cliTelemetry(
  env: Readonly<Record<string, string | undefined>>,
  err: NodeJS.WritableStream,
  secrets: readonly string[] = [],
): TelemetryExporter | undefined {
  const { config, problems } = exportFromEnvironment(env);
  for (const problem of problems) err.write(`warning: ${problem}\n`);
  if (!config) return undefined;
  const kept = secrets.filter((s) => s.length >= 4);
  const redact = (text: string): string => kept.reduce((t, s) => t.split(s).join('[redacted]'), text);
  return startExporter({
    config,
    clean: cleanerOf(redact, createMasker().masker),
    onError: (message) => err.write(`warning: ${message}\n`),
    resource: { 'service.version': CLI_VERSION, 'mcp_host.host': 'cli' },
  });
}
