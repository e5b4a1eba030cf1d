/**
 * The exporter, loaded when it is first needed: the editor's bundle and the CLI require
 * dist/otel.js (esbuild.js) only once an endpoint is configured, so a window or a run that exports
 * nothing never loads OpenTelemetry. `TelemetrySwitch` is what a host holds: the hook of the gate's
 * run path and of the audit log, pointed at the exporter of the configuration in force (none: the
 * caller's trace is passed on unchanged).
 */
import type * as OtelModule from './otel';
import type { OtelOptions } from './otel';
import type { AnyAuditRecord } from '../policy/types';
import { passThrough, type RequestSpan, type RequestStart, type RequestTelemetry } from '../policy/telemetry';
import type { TelemetryExporter } from './exporter';

/** Starts the OTLP exporter (dist/otel.js in the bundles). */
export function startExporter(options: OtelOptions): TelemetryExporter {
  return (require('./otel') as typeof OtelModule).startOtel(options);
}

/** How long stopping may wait for the collector: the CLI exits at most this much later. */
export const SHUTDOWN_BOUND_MS = 2000;

/** The telemetry of a host whose configuration can change (the editor's settings): one hook, the exporter behind it replaced. */
export class TelemetrySwitch implements RequestTelemetry {
  private current: TelemetryExporter | undefined;

  get exporter(): TelemetryExporter | undefined {
    return this.current;
  }

  begin(start: RequestStart): RequestSpan {
    return (this.current ?? passThrough).begin(start);
  }

  /** Written audit records go out as log records while something is exported; never throws. */
  auditRecords(records: readonly AnyAuditRecord[]): void {
    try {
      this.current?.auditRecords(records);
    } catch {
      // The local audit is what counts; its export is best effort.
    }
  }

  /** Exports through `next` from now on; the one before sends what it holds and stops (within the bound). */
  async use(next: TelemetryExporter | undefined): Promise<void> {
    const before = this.current;
    this.current = next;
    if (before && before !== next) await before.shutdown(SHUTDOWN_BOUND_MS);
  }
}
