/**
 * `mcp-host … scan`: what one server (--stdio, --http) or every server of a configuration file
 * (--config) says of itself, run through the definition detectors (../core/scan/detectors.ts),
 * each server scanned with the other servers' tool names (shadowing). The findings go to stdout
 * as JSON, and with --sarif FILE as a SARIF 2.1.0 log for CI code scanning. Exit 0 when nothing
 * is found, 1 when something is, 3 when a server could not be scanned.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ClientHandlers, McpClient } from '../core';
import { scanOffered, type Offered, type ScanFinding } from '../core/scan/detectors';
import { sarifLog, type ScannedServer } from '../core/scan/sarif';

/** What a server offers now: its tools and prompts (when it declares them) and its instructions. */
export async function offeredBy(client: McpClient): Promise<Offered> {
  const capabilities = client.serverCapabilities ?? {};
  return {
    tools: capabilities.tools ? await client.listTools() : [],
    prompts: capabilities.prompts ? await client.listPrompts() : [],
    instructions: client.instructions,
  };
}

/** A server to scan: its name, and how to reach it (a connected client, closed by the caller). */
export interface ScanTarget {
  name: string;
  definedIn?: { uri: string; line: number };
  offered(): Promise<Offered>;
}

export interface ScanOutput {
  servers: Array<{ name: string; findings: ScanFinding[]; error?: string }>;
  findings: number;
}

/** Lists every target (one after another: a CI machine is small), then scans each with the others' tool names. */
export async function scanTargets(targets: readonly ScanTarget[]): Promise<{ output: ScanOutput; scanned: ScannedServer[] }> {
  const listed: Array<{ target: ScanTarget; offered?: Offered; error?: string }> = [];
  for (const target of targets) {
    try {
      listed.push({ target, offered: await target.offered() });
    } catch (error) {
      listed.push({ target, error: (error as Error).message });
    }
  }
  const scanned = listed.map(({ target, offered, error }): ScannedServer => {
    if (!offered) return { name: target.name, findings: [], error, definedIn: target.definedIn };
    const otherTools = new Map(
      listed
        .filter((l) => l.target !== target)
        .flatMap((l) => (l.offered?.tools ?? []).map((t) => [t.name, l.target.name] as [string, string])),
    );
    return { name: target.name, findings: scanOffered(offered, { otherTools }), definedIn: target.definedIn };
  });
  const output: ScanOutput = {
    servers: scanned.map((s) => ({ name: s.name, findings: [...s.findings], ...(s.error !== undefined && { error: s.error }) })),
    findings: scanned.reduce((n, s) => n + s.findings.length, 0),
  };
  return { output, scanned };
}

/** Writes the JSON (and the SARIF file); the exit code. */
export function reportScan(
  result: { output: ScanOutput; scanned: ScannedServer[] },
  sarif: string | undefined,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number {
  out.write(`${JSON.stringify(result.output, null, 2)}\n`);
  if (sarif !== undefined) writeFileSync(sarif, `${JSON.stringify(sarifLog(result.scanned, '0.1.0'), null, 2)}\n`);
  for (const s of result.output.servers) {
    if (s.error !== undefined) err.write(`${s.name}: could not be scanned: ${s.error}\n`);
    else if (s.findings.length) err.write(`${s.name}: ${s.findings.length} finding${s.findings.length > 1 ? 's' : ''}\n`);
  }
  if (result.output.servers.some((s) => s.error !== undefined)) return 3;
  return result.output.findings ? 1 : 0;
}

/** The configuration file as SARIF locates it: relative to the current folder (where CI checked out the repository), with forward slashes. */
export function sarifUri(file: string, cwd = process.cwd()): string {
  return path.relative(cwd, path.resolve(cwd, file)).split(path.sep).join('/');
}

/** A scanning client answers nothing a server asks: no roots beyond none, no model, no person. */
export const scanHandlers: ClientHandlers = {
  listRoots: () => [],
  createMessage: () => Promise.reject(new Error('the scan has no language model')),
  elicit: () => Promise.resolve({ action: 'decline' as const }),
};
